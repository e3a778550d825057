package workspace

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// LeaseGrace is how long a run lease whose holder Job does not exist stays
// held: the Job may be about to be created.
const LeaseGrace = time.Minute

// runLeaseName is the object's run lease.
func runLeaseName(suffix string) string { return "captf-run-" + suffix }

// acquireRunLease takes the object's run lease for the Job about to be
// created. It is free when it has no holder, when its holder is this Job,
// when the holder Job finished or is gone past the grace, or past the
// backstop. Reads are live; a concurrent writer makes this pass wait.
func (p *pass) acquireRunLease(ctx context.Context, jobName string, op Operation) (bool, string, error) {
	return p.acquireLease(ctx, runLeaseName(p.suffix()), "run", jobName, op)
}

// acquireLease takes the Lease name (kind run or cluster) for jobName.
func (p *pass) acquireLease(ctx context.Context, name, kind, jobName string, op Operation) (bool, string, error) {
	key := client.ObjectKey{Namespace: p.obj.GetNamespace(), Name: name}
	now := metav1.NewMicroTime(p.now)
	backstop := int32(p.eff.Policy.ActiveDeadlineSeconds + 600 + 300)
	lease := &coordinationv1.Lease{}
	err := p.e.APIReader.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		labels := state.OwnerLabels(p.role.Kind(), p.obj.GetName(), p.owner.ClusterName)
		labels[infrav1.LeaseLabel] = kind
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: name, Labels: labels,
				Annotations: map[string]string{infrav1.LeaseOperationAnnotation: string(op), infrav1.LeaseAcquiredAtAnnotation: p.now.UTC().Format(time.RFC3339)}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(jobName), LeaseDurationSeconds: ptr.To(backstop), AcquireTime: &now, RenewTime: &now},
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
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = ptr.To(jobName), ptr.To(backstop)
	lease.Spec.AcquireTime, lease.Spec.RenewTime = &now, &now
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
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

// leaseFree reports whether a lease held by another Job may be taken over.
func (p *pass) leaseFree(ctx context.Context, lease *coordinationv1.Lease, holder string) (bool, error) {
	renewed := lease.CreationTimestamp.Time
	if lease.Spec.RenewTime != nil {
		renewed = lease.Spec.RenewTime.Time
	}
	if d := lease.Spec.LeaseDurationSeconds; d != nil && p.now.Sub(renewed) > time.Duration(*d)*time.Second {
		return true, nil
	}
	job := &batchv1.Job{}
	err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: lease.Namespace, Name: holder}, job)
	switch {
	case apierrors.IsNotFound(err):
		// A deleted Job's pod may still be stopping, writing the state.
		if running, err := p.podsRunning(ctx, lease.Namespace, holder); err != nil || running {
			return false, err
		}
		return p.now.Sub(renewed) > LeaseGrace, nil
	case err != nil:
		return false, err
	}
	finished, _, _, _ := jobFinished(job)
	return finished, nil
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
	key := client.ObjectKey{Namespace: p.obj.GetNamespace(), Name: name}
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

// podsRunning reports whether a pod of the Job jobName has not finished.
func (p *pass) podsRunning(ctx context.Context, namespace, jobName string) (bool, error) {
	var pods corev1.PodList
	if err := p.e.APIReader.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{batchv1.JobNameLabel: jobName}); err != nil {
		return false, err
	}
	for _, pod := range pods.Items {
		if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return true, nil
		}
	}
	return false, nil
}
