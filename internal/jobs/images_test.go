package jobs

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestDigestRef(t *testing.T) {
	testCases := []struct{ image, id, want string }{
		{"registry.example/mods/noop:v1", "registry.example/mods/noop@sha256:abc", "registry.example/mods/noop@sha256:abc"},
		{"registry.example:5000/noop:v1", "docker-pullable://registry.example:5000/noop@sha256:abc", "registry.example:5000/noop@sha256:abc"},
		{"registry.example:5000/noop", "sha256:abc", ""},
		{"local/noop@sha256:old", "local/noop@sha256:new", "local/noop@sha256:new"},
	}
	for _, tc := range testCases {
		if got := DigestRef(tc.image, tc.id); got != tc.want {
			t.Errorf("DigestRef(%q, %q) = %q, want %q", tc.image, tc.id, got, tc.want)
		}
	}
}

func TestChooseImage(t *testing.T) {
	const (
		tag    = "registry.example/noop:v1"
		newTag = "registry.example/noop:v2"
		pinned = "registry.example/noop@sha256:abc"
	)
	applied := &RanImage{Image: tag, ImageID: "registry.example/noop@sha256:abc"}
	testCases := []struct {
		name          string
		rec, applied  *RanImage
		spec          string
		unpullable    []string
		want          string
		fallbacks     []string
		digestUnknown bool
	}{
		{"the pinned digest, then the tag, then the spec", applied, applied, newTag, nil, pinned, []string{tag, newTag}, false},
		{"the spec is the tag: one fallback", applied, applied, tag, nil, pinned, []string{tag}, false},
		{"a record of another image is not pinned", &RanImage{Image: newTag}, applied, newTag, nil, newTag, nil, true},
		{"no applied record: the recorded tag", &RanImage{Image: tag}, nil, newTag, nil, tag, []string{newTag}, true},
		{"an unpullable digest is skipped", applied, applied, newTag, []string{pinned}, tag, []string{newTag}, false},
		{"all unpullable: the last one runs to its deadline", applied, applied, tag, []string{pinned, tag}, tag, nil, false},
		{"no record: the spec", nil, nil, tag, nil, tag, nil, true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := ChooseImage(tc.rec, tc.applied, tc.spec, tc.unpullable)
			if got.Image != tc.want || !slices.Equal(got.Fallbacks, tc.fallbacks) || got.DigestUnknown != tc.digestUnknown {
				t.Errorf("ChooseImage = %+v, want image %s, fallbacks %v, digestUnknown %v", got, tc.want, tc.fallbacks, tc.digestUnknown)
			}
		})
	}
}

func TestPodsOf(t *testing.T) {
	pod := func(statuses ...corev1.ContainerStatus) corev1.Pod {
		return corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: statuses}}
	}
	pulling := corev1.ContainerStatus{Name: SourceContainer, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}
	creating := corev1.ContainerStatus{Name: SourceContainer, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	running := corev1.ContainerStatus{Name: SourceContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	ended := corev1.ContainerStatus{Name: SourceContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}
	for _, tc := range []struct {
		name        string
		pods        []corev1.Pod
		failing     bool
		wantStarted bool
	}{
		{"no pod yet", nil, false, false},
		{"a pod being created", []corev1.Pod{pod(creating)}, false, false},
		{"a running pod", []corev1.Pod{pod(running)}, false, true},
		{"an ended pod", []corev1.Pod{pod(ended)}, false, true},
		{"an ended pod and a new one that cannot pull", []corev1.Pod{pod(ended), pod(pulling)}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failing, started := PodsOf(tc.pods)
			if (failing != nil) != tc.failing || started != tc.wantStarted {
				t.Errorf("PodsOf = failing %v, started %v; want failing %v, started %v", failing != nil, started, tc.failing, tc.wantStarted)
			}
		})
	}
}

func TestStuck(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}}
	for _, tc := range []struct {
		name    string
		started bool
		age     time.Duration
		want    bool
	}{
		{"young, never started", false, 59 * time.Second, false},
		{"a minute old, never started", false, time.Minute, true},
		{"old, started", true, time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Stuck(j, tc.started, created.Add(tc.age), time.Minute); got != tc.want {
				t.Errorf("Stuck = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPull(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := func(ann map[string]string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created), Annotations: ann}}
	}
	module := &corev1.ContainerStatus{Name: SourceContainer}
	runner := &corev1.ContainerStatus{Name: RunnerContainer}
	fallbacks := map[string]string{infrav1.ImageFallbacksAnnotation: "local/noop:v1, local/noop:v2"}
	for _, tc := range []struct {
		name string
		job  *batchv1.Job
		cs   *corev1.ContainerStatus
		age  time.Duration
		want PullVerdict
	}{
		{"within the grace: wait for what is left of it", job(fallbacks), module, 90 * time.Second, PullVerdict{Wait: 30 * time.Second}},
		{"the grace over, with an image left: fall back to the next", job(fallbacks), module, 2 * time.Minute, PullVerdict{Next: "local/noop:v1"}},
		{"the grace over, none left: give up", job(nil), module, 2 * time.Minute, PullVerdict{}},
		{"the runner image never falls back", job(fallbacks), runner, 2 * time.Minute, PullVerdict{Runner: true}},
		{"the runner image, within the grace", job(nil), runner, time.Minute, PullVerdict{Wait: time.Minute, Runner: true}},
		{"stopped for its image, within the grace: wait", job(map[string]string{infrav1.ImagePullFailedAnnotation: "true"}), module, time.Minute, PullVerdict{Wait: time.Minute}},
		{"fallbacks written with spaces and empty entries", job(map[string]string{infrav1.ImageFallbacksAnnotation: " , local/noop:v2 ,"}), module, time.Hour, PullVerdict{Next: "local/noop:v2"}},
		{"stopped for its image already", job(map[string]string{infrav1.ImagePullFailedAnnotation: "true", infrav1.ImageFallbacksAnnotation: "local/noop:v1"}), module, time.Hour, PullVerdict{Stopped: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Pull(tc.job, tc.cs, created.Add(tc.age), 2*time.Minute); got != tc.want {
				t.Errorf("Pull = %+v, want %+v", got, tc.want)
			}
		})
	}
}
