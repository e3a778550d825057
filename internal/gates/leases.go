package gates

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/protection"
	"captf.io/captf/pkg/state"
)

// LeaseGrace is how long a run lease whose holder Job was never created
// stays held: the Job may be about to be created.
const LeaseGrace = time.Minute

// Backstop is a lease's leaseDurationSeconds for a Job of deadline
// seconds: the deadline, the pod's termination grace and a margin.
func Backstop(deadline int64) int32 {
	return int32(deadline + jobs.TerminationGracePeriodSeconds + 300)
}

// RunLeaseName is the run lease of the object whose state suffix is suffix.
func RunLeaseName(suffix string) string { return "captf-run-" + suffix }

// ClusterLeaseName is the cluster write lease of a Cluster.
func ClusterLeaseName(namespace, cluster string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + cluster))
	return "captf-cluster-" + hex.EncodeToString(sum[:8])
}

// AcquireRun takes the subject's run lease for the Job about to be
// created. It is free when it has no holder, when its holder is this Job,
// when the holder Job finished or is gone past the grace, or past the
// backstop. Reads are live; a concurrent writer makes the caller wait,
// with why saying so.
func (k Keeper) AcquireRun(ctx context.Context, s Subject, jobName string, op decide.Operation, now time.Time) (ok bool, why string, err error) {
	return k.acquire(ctx, s, RunLeaseName(s.suffix()), "run", jobName, op, now)
}

// acquire takes the Lease name (kind run or cluster) for jobName.
func (k Keeper) acquire(ctx context.Context, s Subject, name, kind, jobName string, op decide.Operation, now time.Time) (bool, string, error) {
	key := client.ObjectKey{Namespace: s.RunNamespace, Name: name}
	micro := metav1.NewMicroTime(now)
	duration := Backstop(s.Deadline)
	lease := &coordinationv1.Lease{}
	err := k.Reader.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		labels := s.labels()
		labels[infrav1.LeaseLabel] = kind
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: name, Labels: labels,
				Annotations: map[string]string{infrav1.LeaseOperationAnnotation: string(op), infrav1.LeaseAcquiredAtAnnotation: now.UTC().Format(time.RFC3339)}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(jobName), LeaseDurationSeconds: ptr.To(duration), AcquireTime: &micro, RenewTime: &micro},
		}
		if err := k.Client.Create(ctx, lease); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return false, "another manager took the " + kind + " lease first", nil
			}
			return false, "", err
		}
		return true, "", nil
	}
	if err != nil {
		return false, "", err
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if holder != "" && holder != jobName {
		if free, err := k.leaseFree(ctx, lease, holder, now); err != nil || !free {
			return false, fmt.Sprintf("Job %s holds the %s lease %s", holder, kind, name), err
		}
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = ptr.To(jobName), ptr.To(duration)
	lease.Spec.AcquireTime, lease.Spec.RenewTime = &micro, &micro
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	if holder != jobName {
		delete(lease.Annotations, infrav1.LeaseJobCreatedAnnotation) // the new holder is not created yet
	}
	lease.Annotations[infrav1.LeaseOperationAnnotation] = string(op)
	lease.Annotations[infrav1.LeaseAcquiredAtAnnotation] = now.UTC().Format(time.RFC3339)
	if err := k.Client.Update(ctx, lease); err != nil {
		if apierrors.IsConflict(err) {
			return false, "another manager took the " + kind + " lease first", nil
		}
		return false, "", err
	}
	return true, "", nil
}

// leaseFree reports whether a lease held by another Job may be taken over
// (LeaseTakeable), reading the holder Job and its pods live.
func (k Keeper) leaseFree(ctx context.Context, lease *coordinationv1.Lease, holder string, now time.Time) (bool, error) {
	job, pods, err := k.ReadHolder(ctx, lease.Namespace, holder)
	if err != nil {
		return false, err
	}
	return LeaseTakeable(lease, holder, job, pods, now, k.Options), nil
}

// RunLeaseHeld reports whether a Job holds the subject's run lease.
func (k Keeper) RunLeaseHeld(ctx context.Context, s Subject, now time.Time) (bool, error) {
	lease, err := k.RunLease(ctx, s)
	if lease == nil || err != nil {
		return false, err
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if holder == "" {
		return false, nil
	}
	free, err := k.leaseFree(ctx, lease, holder, now)
	return !free, err
}

// RunLease reads the subject's run lease live (nil when there is none).
func (k Keeper) RunLease(ctx context.Context, s Subject) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := k.Reader.Get(ctx, client.ObjectKey{Namespace: s.RunNamespace, Name: RunLeaseName(s.suffix())}, lease)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return lease, nil
}

// MarkCreated records on the subject's run lease, and on the cluster lease
// its Job of op took (any cluster lease jobName holds when op is ""), that
// their holder jobName was created: once the Job and its pods are gone, a
// lease is waited out as a holder that ran (LeaseTakeable), not as a Job
// about to be created. Failing is logged, not returned: the Job exists,
// and the engine marks the lease again should the Job vanish.
func (k Keeper) MarkCreated(ctx context.Context, s Subject, jobName string, op decide.Operation) {
	k.markCreated(ctx, s, RunLeaseName(s.suffix()), jobName)
	took := gated(op) && k.Options.ClusterOperationGate && s.HasDependents
	if s.ClusterName != "" && (op == "" || took) {
		k.markCreated(ctx, s, ClusterLeaseName(s.Namespace, s.ClusterName), jobName)
	}
}

func (k Keeper) markCreated(ctx context.Context, s Subject, name, jobName string) {
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: s.RunNamespace, Name: name}
	err := k.Reader.Get(ctx, key, lease)
	if err == nil && (ptr.Deref(lease.Spec.HolderIdentity, "") != jobName || lease.Annotations[infrav1.LeaseJobCreatedAnnotation] == jobName) {
		return
	}
	if err == nil {
		// An update with the resourceVersion just read: a lease another
		// manager took meanwhile is not marked for this Job.
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[infrav1.LeaseJobCreatedAnnotation] = jobName
		err = k.Client.Update(ctx, lease)
	}
	if client.IgnoreNotFound(err) != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Could not record on its lease that the Job was created; if the Job vanishes, the lease is taken over after the short grace", "lease", key.Name, "job", jobName)
	}
}

// Release frees the subject's run lease and its cluster lease when jobName
// holds them, with a precondition on what was read.
func (k Keeper) Release(ctx context.Context, s Subject, jobName string) error {
	if err := k.release(ctx, s, RunLeaseName(s.suffix()), jobName); err != nil {
		return err
	}
	if s.ClusterName != "" {
		return k.release(ctx, s, ClusterLeaseName(s.Namespace, s.ClusterName), jobName)
	}
	return nil
}

// release frees the Lease name when jobName holds it.
func (k Keeper) release(ctx context.Context, s Subject, name, jobName string) error {
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: s.RunNamespace, Name: name}
	if err := k.Reader.Get(ctx, key, lease); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ptr.Deref(lease.Spec.HolderIdentity, "") != jobName {
		return nil
	}
	err := k.Client.Delete(ctx, lease, client.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("releasing Lease %s: %w", key.Name, err)
	}
	return nil
}

// DeleteLeases deletes, one by one, s's run lease and (a cluster's)
// cluster lease in s's namespace: the leases that carry its owner labels.
func (k Keeper) DeleteLeases(ctx context.Context, s Subject) error {
	for _, kind := range []string{"run", "cluster"} {
		selector := client.MatchingLabels(state.OwnerSelector(s.Kind, s.Name))
		selector[infrav1.LeaseLabel] = kind
		if err := protection.DeleteEach(ctx, k.Client, k.Reader, &coordinationv1.LeaseList{}, client.InNamespace(s.Namespace), selector); err != nil {
			return fmt.Errorf("deleting the object's %s Lease: %w", kind, err)
		}
	}
	return nil
}
