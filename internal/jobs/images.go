package jobs

import (
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// The image of a Job. An apply runs spec.source.image. A destroy, refresh,
// drift or restore runs what the last successful apply ran, pinned by the
// digest its pod reported; when that cannot be pulled it falls back to the
// recorded tag, then to spec.source.image (ImagePullFallback).

// RanImage is the image a recorded run ran: the reference it was given and
// the imageID its pod reported ("" when unknown).
type RanImage struct {
	Image, ImageID string
}

// ImageChoice is the image a non-apply Job runs and the ones it falls back
// to.
type ImageChoice struct {
	Image     string
	Fallbacks []string
	// DigestUnknown: no digest is pinned, so the Job runs a tag.
	DigestUnknown bool
}

// ChooseImage orders the candidates of a non-apply Job rendering the run
// rendered (nil: none recorded): the applied run's digest (when rendered
// ran the same image), rendered's tag, spec.source.image; images that
// could not be pulled before are skipped while another is left.
func ChooseImage(rendered, applied *RanImage, spec string, unpullable []string) ImageChoice {
	var candidates []string
	add := func(ref string) {
		if ref != "" && !slices.Contains(candidates, ref) {
			candidates = append(candidates, ref)
		}
	}
	pinned := ""
	if applied != nil && applied.ImageID != "" && (rendered == nil || rendered.Image == applied.Image) {
		pinned = DigestRef(applied.Image, applied.ImageID)
	}
	add(pinned)
	if rendered != nil {
		add(rendered.Image)
	}
	add(spec)
	left := slices.DeleteFunc(slices.Clone(candidates), func(ref string) bool { return slices.Contains(unpullable, ref) })
	if len(left) == 0 && len(candidates) > 0 {
		left = candidates[len(candidates)-1:]
	}
	c := ImageChoice{DigestUnknown: pinned == ""}
	if len(left) > 0 {
		c.Image, c.Fallbacks = left[0], left[1:]
	}
	return c
}

// DigestRef turns a pod's imageID into a pullable reference pinned by
// digest: <repository>@sha256:<hex>.
func DigestRef(image, imageID string) string {
	at := strings.LastIndex(imageID, "@sha256:")
	if at < 0 {
		return ""
	}
	repo := image
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + imageID[at:]
}

// PodsOf is what a running Job's pods say: the container of one that
// cannot pull its image (ImagePullFailing; nil when none), and whether a
// container of any of them started.
func PodsOf(pods []corev1.Pod) (failing *corev1.ContainerStatus, started bool) {
	for i := range pods {
		if cs := ImagePullFailing(&pods[i]); cs != nil {
			return cs, false
		}
		for _, cs := range pods[i].Status.ContainerStatuses {
			if cs.State.Running != nil || cs.State.Terminated != nil {
				started = true
			}
		}
	}
	return nil, started
}

// Stuck: a Job none of whose pods started, at least stuckAge old at now,
// is stuck once its per-run Secret is gone (the caller reads that last).
func Stuck(j *batchv1.Job, started bool, now time.Time, stuckAge time.Duration) bool {
	return !started && now.Sub(j.CreationTimestamp.Time) >= stuckAge
}

// PullVerdict is what to do with a running Job whose container cs cannot
// pull its image.
type PullVerdict struct {
	// Wait: the grace is not over; it ends in Wait.
	Wait time.Duration
	// Stopped: the Job was stopped for its image already; its end is
	// bookkept.
	Stopped bool
	// Next is the module image to fall back to (""; none left, or the
	// runner image, which never falls back: it is the manager's).
	Next string
	// Runner: the image is the runner's (the init container's).
	Runner bool
}

// Pull is what to do with the running Job j whose container cs cannot
// pull its image, at now, given grace since the Job's creation: wait out
// the grace; once it is over, fall back to the Job's next image when it
// has one (a module image), or give the Job up.
func Pull(j *batchv1.Job, cs *corev1.ContainerStatus, now time.Time, grace time.Duration) PullVerdict {
	v := PullVerdict{Runner: cs.Name == RunnerContainer}
	if left := grace - now.Sub(j.CreationTimestamp.Time); left > 0 {
		v.Wait = left
		return v
	}
	if j.Annotations[infrav1.ImagePullFailedAnnotation] == "true" {
		v.Stopped = true
		return v
	}
	if next := Fallbacks(j); len(next) > 0 && !v.Runner {
		v.Next = next[0]
	}
	return v
}

// Fallbacks are the images a Job falls back to, in order (Marks.Fallbacks,
// written by Build).
func Fallbacks(j *batchv1.Job) []string {
	var out []string
	for _, ref := range strings.Split(j.Annotations[infrav1.ImageFallbacksAnnotation], ",") {
		if ref = strings.TrimSpace(ref); ref != "" {
			out = append(out, ref)
		}
	}
	return out
}
