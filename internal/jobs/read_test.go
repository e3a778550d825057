package jobs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestImagePullFailing(t *testing.T) {
	waiting := func(name, reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, Image: "local/x:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "m"}}}
	}
	running := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	}
	for _, tc := range []struct {
		name     string
		statuses []corev1.ContainerStatus
		want     string
	}{
		{"no status yet", nil, ""},
		{"the module container cannot pull its image", []corev1.ContainerStatus{waiting(SourceContainer, "ErrImagePull")}, "ErrImagePull"},
		{"the kubelet backs off", []corev1.ContainerStatus{waiting(SourceContainer, "ImagePullBackOff")}, "ImagePullBackOff"},
		{"an image reference the kubelet refuses", []corev1.ContainerStatus{waiting(SourceContainer, "InvalidImageName")}, "InvalidImageName"},
		{"an image the pull policy forbids pulling", []corev1.ContainerStatus{waiting(SourceContainer, "ErrImageNeverPull")}, "ErrImageNeverPull"},
		{"waiting for another reason", []corev1.ContainerStatus{waiting(SourceContainer, "ContainerCreating")}, ""},
		{"running", []corev1.ContainerStatus{running(SourceContainer)}, ""},
		{"another container that cannot pull its image", []corev1.ContainerStatus{waiting("sidecar", "ErrImagePull"), running(SourceContainer)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := ImagePullFailing(&corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: tc.statuses}})
			got := ""
			if cs != nil {
				got = cs.State.Waiting.Reason
				if cs.Name != SourceContainer || cs.Image != "local/x:1" {
					t.Errorf("status of %s (image %q), want the module container's", cs.Name, cs.Image)
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// The runner init container runs first: while it cannot pull the
	// runner image, the module container waits in PodInitializing.
	for _, tc := range []struct {
		name string
		init []corev1.ContainerStatus
		want string
	}{
		{"the runner image cannot be pulled", []corev1.ContainerStatus{waiting(RunnerContainer, "ImagePullBackOff")}, RunnerContainer},
		{"the runner ran", []corev1.ContainerStatus{{Name: RunnerContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}}, ""},
		{"another init container that cannot pull its image", []corev1.ContainerStatus{waiting("setup", "ErrImagePull")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{InitContainerStatuses: tc.init, ContainerStatuses: []corev1.ContainerStatus{waiting(SourceContainer, "PodInitializing")}}}
			got := ""
			if cs := ImagePullFailing(pod); cs != nil {
				got = cs.Name
			}
			if got != tc.want {
				t.Errorf("failing container %q, want %q", got, tc.want)
			}
		})
	}
}
