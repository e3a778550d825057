package setup

import (
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
)

// The pod cache keeps what the pod watch reads (the Job, the runner and
// module containers' pull failures) and nothing else of a Job's pod: not
// its spec, its images, its other labels, nor the runner's result in the
// termination message.
func TestPodAsWatched(t *testing.T) {
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "Failed to pull image \"local/gone:1\""}}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "captf-m-web-0-apply-a1-abcdef-x1", UID: "u", ResourceVersion: "7",
			Labels:      map[string]string{batchv1.JobNameLabel: "captf-m-web-0-apply-a1-abcdef", infrav1.ManagedLabel: "true", infrav1.OwnerNameLabel: "web-0"},
			Annotations: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: jobs.SourceContainer, Image: "local/gone:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Message: "m",
			InitContainerStatuses: []corev1.ContainerStatus{{Name: jobs.RunnerContainer, Image: "local/runner:1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "done"}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: jobs.SourceContainer, Image: "local/gone:1", State: waiting("ImagePullBackOff"),
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: `{"outputs":"secret"}`}}}}},
	}
	got, err := podAsWatched(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: pod.Name, UID: "u", ResourceVersion: "7",
			Labels: map[string]string{batchv1.JobNameLabel: "captf-m-web-0-apply-a1-abcdef"}},
		Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{Name: jobs.RunnerContainer}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: jobs.SourceContainer,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cached %+v\nwant %+v", got, want)
	}
	if jobs.ImagePullFailing(got.(*corev1.Pod)) == nil {
		t.Error("the cached pod no longer tells the pull failure the watch wakes on")
	}
	// Nor the runner image's, which the init container waits for first.
	pod.Status.InitContainerStatuses[0].State = waiting("ErrImagePull")
	pod.Status.ContainerStatuses[0].State = waiting("PodInitializing")
	if got, _ := podAsWatched(pod); jobs.ImagePullFailing(got.(*corev1.Pod)) == nil {
		t.Error("the cached pod no longer tells the runner image's pull failure")
	}
	// The deleted-object tombstones of an informer are not pods: kept.
	other := &corev1.Secret{}
	if kept, err := podAsWatched(other); err != nil || kept != other {
		t.Errorf("a non-pod became %v (%v)", kept, err)
	}
	// Only pods that have not ended are cached.
	for phase, cached := range map[corev1.PodPhase]bool{corev1.PodPending: true, corev1.PodRunning: true, corev1.PodSucceeded: false, corev1.PodFailed: false} {
		if got := podsNotEnded.Matches(fields.Set{"status.phase": string(phase)}); got != cached {
			t.Errorf("a %s pod cached: %v, want %v", phase, got, cached)
		}
	}
	if s := podsNotEnded.String(); !strings.Contains(s, "status.phase!=Succeeded") || !strings.Contains(s, "status.phase!=Failed") {
		t.Errorf("selector %q", s)
	}
}
