package workspace

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/custody"
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

// releaseBackups lets the object's state backups go with it: they keep
// their owner reference and lose their protection. A set nothing owns (one
// the runner rescued while the object was being deleted) would never go:
// it is deleted.
func (p *pass) releaseBackups(ctx context.Context) error {
	backups := state.SecretMetadataList()
	if err := p.e.APIReader.List(ctx, backups, client.InNamespace(p.obj.GetNamespace()),
		p.backupSets()); err != nil {
		return fmt.Errorf("listing the state backups: %w", err)
	}
	for i := range backups.Items {
		b := &backups.Items[i]
		if b.Labels[infrav1.RetainedFromUIDLabel] != "" {
			continue
		}
		b.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
		var err error
		if custody.HasOwner(b, p.obj) {
			err = protection.Release(ctx, p.e.client(), b)
		} else {
			err = protection.Delete(ctx, p.e.client(), b)
		}
		if err != nil {
			return fmt.Errorf("releasing state backup: %w", err)
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
	p.surplus = nil
	if !p.stData {
		return
	}
	surplus := state.Surplus(p.suffix(), p.stSecrets)
	if len(surplus) == 0 {
		return
	}
	kept := p.stSecrets[:0]
	for _, s := range p.stSecrets {
		if slices.Contains(surplus, s.Name) {
			p.surplus = append(p.surplus, s)
		} else {
			kept = append(kept, s)
		}
	}
	p.stSecrets = kept
}

// releaseSurplus lets go of the pieces setAsideSurplus left out.
func (p *pass) releaseSurplus(ctx context.Context) error {
	for i := range p.surplus {
		s := &p.surplus[i]
		ctrl.LoggerFrom(ctx).Info("Releasing a state piece Terraform deleted", "secret", s.Name)
		if err := protection.Release(ctx, p.e.client(), s); err != nil {
			return fmt.Errorf("releasing surplus state piece: %w", err)
		}
	}
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
	elsewhere := ""
	if !p.e.Options.Evacuation {
		elsewhere = " (this manager watches one namespace, --namespace, so it runs no destroy in an evacuation namespace)"
	}
	return fmt.Sprintf("Namespace %s is being deleted and Kubernetes refuses new Jobs in it, so the %s cannot run%s. "+
		"The state %s and the inputs records are kept, readable, by the finalizer %s: pause this object, run the destroy by hand "+
		"(see the stuck-destroy runbook), then set spec.deletionPolicy: Retain and unpause; the kept Secrets then wait for you to remove that finalizer",
		p.obj.GetNamespace(), op, elsewhere, state.SecretName(p.suffix()), protection.Finalizer)
}

// protectDeleting protects, while the object is being deleted and no Job
// runs (the chore ProtectDeleting), the state pieces, backups and records that lack the protection
// and are not being deleted yet: pieces an interrupted apply created, a
// set the runner rescued, Secrets written before CAPTF protected them.
// Their owner references are left as they are (a deleting object's state
// is cleaned up or retained, never re-owned). The plan key is left alone:
// one made while the object is being deleted must stay unprotected (see
// writePlanKey), and one made before is protected already.
func (p *pass) protectDeleting(ctx context.Context) error {
	list := state.SecretMetadataList()
	if err := p.e.APIReader.List(ctx, list, client.InNamespace(p.obj.GetNamespace()),
		p.backupSets()); err != nil {
		return fmt.Errorf("listing the state backups: %w", err)
	}
	candidates := list.Items
	for i := range p.stSecrets {
		candidates = append(candidates, metav1.PartialObjectMetadata{ObjectMeta: p.stSecrets[i].ObjectMeta})
	}
	for _, name := range p.recordNames() {
		s := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
		if err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: p.obj.GetNamespace(), Name: name}, s); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		candidates = append(candidates, *s)
	}
	for i := range candidates {
		s := &candidates[i]
		if s.Labels[infrav1.RetainedFromUIDLabel] != "" || protection.Protected(s) || protection.Terminating(s) {
			continue
		}
		s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
		base := s.DeepCopy()
		protection.Protect(s)
		if err := p.e.client().Patch(ctx, s, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				continue // gone, or changed: the next pass looks again
			}
			return fmt.Errorf("protecting Secret %s: %w", s.Name, err)
		}
	}
	return nil
}

// sweepOrphanedJobs deletes, with their pods, the Jobs without an owner
// reference (those of a deleting object) that name key, an object of
// role's kind that no longer exists: the ones its release did not delete
// because the manager stopped between removing the finalizer and
// deleting them (deleteUnownedJobs). The Job watch brings them here at
// every start; their ttlSecondsAfterFinished is only the last resort.
func (e *Engine) sweepOrphanedJobs(ctx context.Context, role roles.Role, key client.ObjectKey) error {
	owner := state.OwnerLabels(role.Kind(), key.Name, "")
	selector := client.MatchingLabels{infrav1.OwnerKindLabel: owner[state.LabelOwnerKind], infrav1.OwnerNameLabel: owner[state.LabelOwnerName]}
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
