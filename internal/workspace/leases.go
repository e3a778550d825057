package workspace

import (
	"context"
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
	"captf.io/captf/pkg/state"
)

// LeaseGrace is how long a run lease whose holder Job was never created
// stays held: the Job may be about to be created.
const LeaseGrace = time.Minute

// backstop is a lease's leaseDurationSeconds for a Job of deadline
// seconds: the deadline, the pod's termination grace and a margin.
func backstop(deadline int64) int32 {
	return int32(deadline + jobs.TerminationGracePeriodSeconds + 300)
}

// runLeaseName is the object's run lease.
func runLeaseName(suffix string) string { return "captf-run-" + suffix }

// acquireRunLease takes the object's run lease for the Job about to be
// created. It is free when it has no holder, when its holder is this Job,
// when the holder Job finished or is gone past the grace, or past the
// backstop. Reads are live; a concurrent writer makes this pass wait.
func (p *pass) acquireRunLease(ctx context.Context, jobName string, op decide.Operation) (bool, string, error) {
	return p.acquireLease(ctx, runLeaseName(p.suffix()), "run", jobName, op)
}

// acquireLease takes the Lease name (kind run or cluster) for jobName.
func (p *pass) acquireLease(ctx context.Context, name, kind, jobName string, op decide.Operation) (bool, string, error) {
	key := client.ObjectKey{Namespace: p.runNamespace(), Name: name}
	now := metav1.NewMicroTime(p.now)
	duration := backstop(p.eff.Policy.ActiveDeadlineSeconds)
	lease := &coordinationv1.Lease{}
	err := p.e.APIReader.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		labels := state.OwnerLabels(p.role.Kind(), p.obj.GetName(), p.owner.ClusterName)
		labels[infrav1.LeaseLabel] = kind
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: name, Labels: labels,
				Annotations: map[string]string{infrav1.LeaseOperationAnnotation: string(op), infrav1.LeaseAcquiredAtAnnotation: p.now.UTC().Format(time.RFC3339)}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(jobName), LeaseDurationSeconds: ptr.To(duration), AcquireTime: &now, RenewTime: &now},
		}
		if err := p.e.Client.Create(ctx, lease); err != nil {
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
		if free, err := p.leaseFree(ctx, lease, holder); err != nil || !free {
			return false, fmt.Sprintf("Job %s holds the %s lease %s", holder, kind, name), err
		}
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = ptr.To(jobName), ptr.To(duration)
	lease.Spec.AcquireTime, lease.Spec.RenewTime = &now, &now
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	if holder != jobName {
		delete(lease.Annotations, infrav1.LeaseJobCreatedAnnotation) // the new holder is not created yet
	}
	lease.Annotations[infrav1.LeaseOperationAnnotation] = string(op)
	lease.Annotations[infrav1.LeaseAcquiredAtAnnotation] = p.now.UTC().Format(time.RFC3339)
	if err := p.e.Client.Update(ctx, lease); err != nil {
		if apierrors.IsConflict(err) {
			return false, "another manager took the " + kind + " lease first", nil
		}
		return false, "", err
	}
	return true, "", nil
}

// leaseFree reports whether a lease held by another Job may be taken over
// (leaseTakeable), reading the holder Job and its pods live.
func (p *pass) leaseFree(ctx context.Context, lease *coordinationv1.Lease, holder string) (bool, error) {
	job, pods, err := p.readHolder(ctx, lease.Namespace, holder)
	if err != nil {
		return false, err
	}
	return leaseTakeable(lease, holder, job, pods, p.now, p.e.Options), nil
}

// markLeaseCreated records on the Lease name that its holder jobName was
// created: once the Job and its pods are gone, the lease is waited out as
// a holder that ran (leaseTakeable), not as a Job about to be created.
// Failing is logged, not returned: the Job exists, and jobVanished marks
// the lease again should the Job vanish.
func (p *pass) markLeaseCreated(ctx context.Context, name, jobName string) {
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: p.runNamespace(), Name: name}
	err := p.e.APIReader.Get(ctx, key, lease)
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
		err = p.e.Client.Update(ctx, lease)
	}
	if client.IgnoreNotFound(err) != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Could not record on its lease that the Job was created; if the Job vanishes, the lease is taken over after the short grace", "lease", key.Name, "job", jobName)
	}
}

// releaseRunLease frees the run lease when jobName holds it, with a
// precondition on what was read.
func (p *pass) releaseRunLease(ctx context.Context, jobName string) error {
	if err := p.releaseLease(ctx, runLeaseName(p.suffix()), jobName); err != nil {
		return err
	}
	if p.owner.ClusterName != "" {
		return p.releaseLease(ctx, clusterLeaseName(p.obj.GetNamespace(), p.owner.ClusterName), jobName)
	}
	return nil
}

// releaseLease frees the Lease name when jobName holds it.
func (p *pass) releaseLease(ctx context.Context, name, jobName string) error {
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: p.runNamespace(), Name: name}
	if err := p.e.APIReader.Get(ctx, key, lease); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ptr.Deref(lease.Spec.HolderIdentity, "") != jobName {
		return nil
	}
	err := p.e.Client.Delete(ctx, lease, client.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("releasing Lease %s: %w", key.Name, err)
	}
	return nil
}
