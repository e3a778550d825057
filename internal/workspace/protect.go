package workspace

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

// ownsJob: j runs for obj, by its controller reference or, for a Job
// started while obj was being deleted (no owner reference), by the
// captf.io/owner-uid annotation.
func ownsJob(j *batchv1.Job, obj client.Object) bool {
	if ref := metav1.GetControllerOf(j); ref != nil {
		return ref.UID == obj.GetUID()
	}
	return j.Annotations[infrav1.OwnerUIDAnnotation] == string(obj.GetUID())
}

// deleteUnownedJobs deletes, with their pods, the object's Jobs that have
// no owner reference: the garbage collector would never take them. It
// runs once the finalizer is removed; a Job it misses (a crash right
// then) goes by its ttlSecondsAfterFinished.
func (p *pass) deleteUnownedJobs(ctx context.Context) error {
	for i := range p.jobs {
		j := &p.jobs[i]
		if metav1.GetControllerOf(j) != nil || !j.DeletionTimestamp.IsZero() {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Deleting a Job that ran without an owner reference", "job", j.Name)
		if err := p.e.client().Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Job %s: %w", j.Name, err)
		}
	}
	return nil
}

// setAsideSurplus leaves out of the state read the pieces Terraform
// deleted while shrinking the state, which the protection still keeps:
// Terraform's next read would take them for part of the state. The chore
// ReleaseSurplus lets go of them. It needs the Secrets' data, so it sees
// them when the state was read in full (a shrink rewrites the base piece,
// so a changed state is always read in full).
func (p *pass) setAsideSurplus() {
	p.stored.surplus = nil
	if !p.stored.data {
		return
	}
	surplus := state.Surplus(p.suffix(), p.stored.secrets)
	if len(surplus) == 0 {
		return
	}
	kept := p.stored.secrets[:0]
	for _, s := range p.stored.secrets {
		if slices.Contains(surplus, s.Name) {
			p.stored.surplus = append(p.stored.surplus, s)
		} else {
			kept = append(kept, s)
		}
	}
	p.stored.secrets = kept
}

// releaseSurplus lets go of the pieces setAsideSurplus left out.
func (p *pass) releaseSurplus(ctx context.Context) error {
	if len(p.stored.surplus) == 0 {
		return nil
	}
	names := make([]string, len(p.stored.surplus))
	for i := range p.stored.surplus {
		names[i] = p.stored.surplus[i].Name
	}
	if err := p.custody().ReleaseSurplus(ctx, p.stored.surplus); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Released the state pieces Terraform deleted", "secrets", names)
	return nil
}

// namespaceTerminating reports whether the object's namespace is being
// deleted: Kubernetes then refuses every new Job, Lease and
// ServiceAccount in it.
func (p *pass) namespaceTerminating(ctx context.Context) (bool, error) {
	ns := &corev1.Namespace{}
	if err := p.e.APIReader.Get(ctx, client.ObjectKey{Name: p.obj.GetNamespace()}, ns); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return !ns.DeletionTimestamp.IsZero(), nil
}

// namespaceTerminatingMessage says why the Job of op cannot run and the
// way out.
func (p *pass) namespaceTerminatingMessage(op decide.Operation) string {
	return conditions.NamespaceTerminatingMessage(p.obj.GetNamespace(), state.SecretName(p.suffix()), protection.Finalizer, op, p.e.Options.Evacuation)
}

// protectDeleting (the chore ProtectDeleting) protects, while the object
// is being deleted and no Job runs, its state pieces, backups and records
// that lack the protection (custody.Keeper.ProtectDeleting); the plan key
// is left alone (see custody.Keeper.WritePlanKey).
func (p *pass) protectDeleting(ctx context.Context) error {
	return p.custody().ProtectDeleting(ctx, p.obj, p.role.Kind(), p.suffix(), p.stored.secrets)
}

// sweepOrphanedJobs deletes, with their pods, the Jobs without an owner
// reference (those of a deleting object) that name key, an object of
// role's kind that no longer exists: the ones its release did not delete
// because the manager stopped between removing the finalizer and
// deleting them (deleteUnownedJobs). The Job watch brings them here at
// every start; their ttlSecondsAfterFinished is only the last resort.
func (e *Engine) sweepOrphanedJobs(ctx context.Context, role roles.Role, key client.ObjectKey) error {
	selector := client.MatchingLabels(state.OwnerSelector(role.Kind(), key.Name))
	if e.Options.WatchFilter != "" {
		selector[infrav1.WatchFilterLabel] = e.Options.WatchFilter // a gone object of another shard is not ours to sweep
	}
	var list batchv1.JobList
	if err := e.client().List(ctx, &list, client.InNamespace(key.Namespace), selector); err != nil {
		return fmt.Errorf("listing the Jobs of %s %s: %w", role.Kind(), key, err)
	}
	var orphans []*batchv1.Job
	for i := range list.Items {
		j := &list.Items[i]
		if metav1.GetControllerOf(j) == nil && j.Annotations[infrav1.OwnerAnnotation] == key.Name && j.DeletionTimestamp.IsZero() {
			orphans = append(orphans, j)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	// The NotFound that brought the pass here may be older than the list:
	// a pass woken by the Machine before its TerraformMachine was created
	// lists the Jobs made since for the new object. Read after listing, an
	// object that exists keeps the Jobs that name its UID.
	obj := role.New()
	if err := e.APIReader.Get(ctx, key, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading %s %s again: %w", role.Kind(), key, err)
	}
	for _, j := range orphans {
		if uid := j.Annotations[infrav1.OwnerUIDAnnotation]; obj.GetUID() != "" && (uid == "" || uid == string(obj.GetUID())) {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Deleting a Job whose object is gone", "job", j.Name)
		if err := e.client().Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Job %s: %w", j.Name, err)
		}
	}
	return nil
}
