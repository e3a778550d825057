package gates

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
)

// A holder is the Job, and its pod, that holds a run or cluster lease or
// the runtime's state lock. Taking either over while the holder still runs
// lets two runtimes write one state. A pod object that is gone proves
// nothing: a pod force-deleted on a partitioned node, or whose node was
// lost, may still run its runner. So a holder whose pod is gone is dead
// only once its pod's termination grace plus the lease duration have
// passed since the pod's deletion, or, when that time is unknown (the pod
// object is gone), since the holder was last known alive (its lease's
// renewal, the lock's creation). A finished pod (Succeeded, Failed) is
// dead at once: its containers have stopped.

// HolderWait is how long a holder pod may still run after its deletion
// (or after it was last known alive): its termination grace (from its
// Job's pod template; jobs.TerminationGracePeriodSeconds when the Job is
// gone) plus leaseDuration. Options.HolderGrace and
// Options.HolderLeaseDuration replace either when set.
func (o Options) HolderWait(job *batchv1.Job, leaseDuration time.Duration) time.Duration {
	grace := time.Duration(jobs.TerminationGracePeriodSeconds) * time.Second
	if job != nil {
		if g := job.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
			grace = time.Duration(*g) * time.Second
		}
	}
	if o.HolderGrace > 0 {
		grace = o.HolderGrace
	}
	if o.HolderLeaseDuration > 0 {
		leaseDuration = o.HolderLeaseDuration
	}
	return grace + leaseDuration
}

// HolderDead reports whether a holder whose pods are pods can no longer
// write: each pod finished, or deleted more than wait ago; with no pod
// object left, wait has passed since since (a zero since: never known, so
// never dead). A running pod is alive whatever its age.
func HolderDead(pods []corev1.Pod, since, now time.Time, wait time.Duration) bool {
	if len(pods) == 0 {
		return !since.IsZero() && now.Sub(since) > wait
	}
	for i := range pods {
		pod := &pods[i]
		switch {
		case PodFinished(pod):
		case pod.DeletionTimestamp != nil && now.Sub(pod.DeletionTimestamp.Time) > wait:
		default:
			return false
		}
	}
	return true
}

// PodFinished: the pod's containers have stopped.
func PodFinished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// HolderRuns: the holder visibly runs: its Job has not finished (the Job
// controller may still start its pod), or one of its pods runs and is not
// being deleted.
func HolderRuns(job *batchv1.Job, pods []corev1.Pod) bool {
	if job != nil {
		if finished, _, _, _ := jobs.Finished(job); !finished {
			return true
		}
	}
	for i := range pods {
		p := &pods[i]
		if !PodFinished(p) && p.DeletionTimestamp == nil {
			return true
		}
	}
	return false
}

// LeaseTakeable decides whether a lease another Job (holder) holds may be
// taken over, from the holder's Job (nil: gone) and pods, read live:
//
//   - a holder that visibly runs keeps it until the backstop
//     (leaseDurationSeconds since its renewal: the Job's deadline, grace
//     and a margin);
//   - a holder Job never created (no Job, no pod, and the lease does not
//     say it was created: the manager stopped between the lease and the
//     Job, or the name changed while waiting) is waited for LeaseGrace;
//   - otherwise the holder must be dead (HolderDead), counting from the
//     lease's renewal when no pod says when it was deleted.
func LeaseTakeable(lease *coordinationv1.Lease, holder string, job *batchv1.Job, pods []corev1.Pod, now time.Time, o Options) bool {
	renewed := lease.CreationTimestamp.Time
	if lease.Spec.RenewTime != nil {
		renewed = lease.Spec.RenewTime.Time
	}
	duration := time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)) * time.Second
	switch {
	case HolderRuns(job, pods):
		return duration > 0 && now.Sub(renewed) > duration
	case job == nil && len(pods) == 0 && lease.Annotations[infrav1.LeaseJobCreatedAnnotation] != holder:
		return now.Sub(renewed) > LeaseGrace
	}
	return HolderDead(pods, renewed, now, o.HolderWait(job, duration))
}

// ReadHolder reads the Job jobName (nil when it is gone) and its pods,
// live.
func (k Keeper) ReadHolder(ctx context.Context, namespace, jobName string) (*batchv1.Job, []corev1.Pod, error) {
	var pods corev1.PodList
	if err := k.Reader.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{batchv1.JobNameLabel: jobName}); err != nil {
		return nil, nil, err
	}
	job := &batchv1.Job{}
	err := k.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: jobName}, job)
	if apierrors.IsNotFound(err) {
		return nil, pods.Items, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return job, pods.Items, nil
}
