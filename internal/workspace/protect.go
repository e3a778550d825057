package workspace

import (
	"context"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/protection"
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
// then) goes with the orphan sweep (runs.Keeper.SweepOrphans).
func (p *pass) deleteUnownedJobs(ctx context.Context) error {
	return p.e.runs().DeleteUnowned(ctx, p.jobs)
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
//
// It reads the object live first: once its finalizer is gone (or the
// object, or it is another object of the name), another manager's cleanup
// let go of those Secrets, and protected again they would stay,
// terminating, with nobody to release them. (That cleanup deletes the
// destroy Job last, so a pass whose Jobs miss it read them after the
// finalizer went.)
func (p *pass) protectDeleting(ctx context.Context) error {
	live := p.role.New()
	if err := p.e.APIReader.Get(ctx, client.ObjectKeyFromObject(p.obj), live); err != nil ||
		live.GetUID() != p.obj.GetUID() || !controllerutil.ContainsFinalizer(live, p.role.Finalizer()) {
		return client.IgnoreNotFound(err)
	}
	return p.custody().ProtectDeleting(ctx, p.obj, p.role.Kind(), p.suffix(), p.stored.secrets)
}
