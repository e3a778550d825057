package gates

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// holderPod is a pod of the holder Job in phase, being deleted since
// deletedAgo when that is not 0.
func holderPod(phase corev1.PodPhase, deletedAgo time.Duration) corev1.Pod {
	p := corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
	if deletedAgo != 0 {
		p.DeletionTimestamp = ptr.To(metav1.NewTime(t0.Add(-deletedAgo)))
	}
	return p
}

// TestHolderDead: a finished pod is dead at once, a running one never; a
// pod whose object is gone (force-deleted on a partitioned node, lost with
// its node) may still run, so it is dead only once its grace and the
// lease duration have passed since it was last known alive, and one being
// deleted only once they have passed since its deletion.
func TestHolderDead(t *testing.T) {
	const wait = 600*time.Second + 4500*time.Second // the default grace and backstop
	testCases := []struct {
		name  string
		pods  []corev1.Pod
		since time.Duration // ago; 0: unknown
		want  bool
	}{
		{"a succeeded pod is dead at once", []corev1.Pod{holderPod(corev1.PodSucceeded, 0)}, time.Second, true},
		{"a failed pod is dead at once", []corev1.Pod{holderPod(corev1.PodFailed, 0)}, time.Second, true},
		{"a running pod is alive, however old its lease", []corev1.Pod{holderPod(corev1.PodRunning, 0)}, 100 * time.Hour, false},
		{"one of two pods still runs", []corev1.Pod{holderPod(corev1.PodFailed, 0), holderPod(corev1.PodRunning, 0)}, time.Hour, false},
		{"the pod object is gone a minute after the lease's renewal", nil, time.Minute, false},
		{"the pod object is gone an hour after it", nil, time.Hour, false},
		{"the pod object is gone and the grace and lease duration have passed", nil, wait + time.Second, true},
		{"the pod object is gone and nothing says since when", nil, 0, false},
		{"a pod being deleted, within its grace", []corev1.Pod{holderPod(corev1.PodRunning, 5*time.Minute)}, 2 * wait, false},
		{"a pod stuck being deleted past its grace and the lease duration", []corev1.Pod{holderPod(corev1.PodRunning, wait+time.Second)}, time.Hour, true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			var since time.Time
			if tc.since != 0 {
				since = t0.Add(-tc.since)
			}
			if got := HolderDead(tc.pods, since, t0, wait); got != tc.want {
				t.Errorf("HolderDead = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLeaseTakeable: when a lease held by another Job may be taken over.
func TestLeaseTakeable(t *testing.T) {
	const holder = "captf-c-demo-apply-a1-0a1b2c"
	lease := func(renewedAgo time.Duration, created bool) *coordinationv1.Lease {
		l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(Backstop(3600)),
			RenewTime: ptr.To(metav1.NewMicroTime(t0.Add(-renewedAgo))),
		}}
		if created {
			l.Annotations = map[string]string{infrav1.LeaseJobCreatedAnnotation: holder}
		}
		return l
	}
	running := &batchv1.Job{}
	finished := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{
		Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-time.Minute)),
	}}}}
	pods := func(p ...corev1.Pod) []corev1.Pod { return p }
	testCases := []struct {
		name  string
		lease *coordinationv1.Lease
		job   *batchv1.Job
		pods  []corev1.Pod
		opts  Options
		want  bool
	}{
		{"its Job runs", lease(time.Hour, true), running, pods(holderPod(corev1.PodRunning, 0)), Options{}, false},
		{"its Job runs past the backstop", lease(2*time.Hour, true), running, pods(holderPod(corev1.PodRunning, 0)), Options{}, true},
		{"its Job finished and its pod too", lease(time.Hour, true), finished, pods(holderPod(corev1.PodFailed, 0)), Options{}, true},
		{"its Job finished, its pod force-deleted", lease(10*time.Minute, true), finished, nil, Options{}, false},
		{"its Job finished, its pod gone past the backstop but within the grace", lease(80*time.Minute, true), finished, nil, Options{}, false},
		{"its Job finished, its pod gone past the grace and the backstop", lease(86*time.Minute, true), finished, nil, Options{}, true},
		{"its Job and pod gone", lease(10*time.Minute, true), nil, nil, Options{}, false},
		{"its Job gone, its pod stopping", lease(2*time.Hour, true), nil, pods(holderPod(corev1.PodRunning, time.Minute)), Options{}, false},
		{"its Job gone, its pod stopped", lease(10*time.Minute, true), nil, pods(holderPod(corev1.PodSucceeded, time.Minute)), Options{}, true},
		{"its Job never created, within the grace", lease(30*time.Second, false), nil, nil, Options{}, false},
		{"its Job never created, past the grace", lease(2*time.Minute, false), nil, nil, Options{}, true},
		{"shortened waits (tests)", lease(10*time.Second, true), finished, nil, Options{HolderGrace: time.Second, HolderLeaseDuration: 2 * time.Second}, true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := LeaseTakeable(tc.lease, holder, tc.job, tc.pods, t0, tc.opts); got != tc.want {
				t.Errorf("LeaseTakeable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHolderWait(t *testing.T) {
	withGrace := &batchv1.Job{}
	withGrace.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	testCases := []struct {
		name string
		opts Options
		job  *batchv1.Job
		want time.Duration
	}{
		{"the Job is gone: the default grace", Options{}, nil, 600*time.Second + time.Hour},
		{"the grace of the Job's pod template", Options{}, withGrace, 30*time.Second + time.Hour},
		{"options replace both", Options{HolderGrace: time.Second, HolderLeaseDuration: 2 * time.Second}, withGrace, 3 * time.Second},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.opts.HolderWait(tc.job, time.Hour); got != tc.want {
				t.Errorf("HolderWait = %v, want %v", got, tc.want)
			}
		})
	}
}

// t0 is the tests' now.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
