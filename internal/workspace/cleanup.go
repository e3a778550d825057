package workspace

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/crashpoint"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/runnerrbac"
)

// countDependents counts the machines and pools of a deleting cluster,
// and says what holds its deletion (DeletionBlocked).
func (p *pass) countDependents(ctx context.Context) error {
	p.dependentNames = nil
	if p.owner.ClusterName == "" {
		p.set(conditions.NotBlocked) // no Cluster: nothing of it to wait for
		p.stepRan(conditions.StepDependents)
		return nil
	}
	var err error
	if p.dependentNames, err = roles.Dependents(ctx, p.e.APIReader, p.obj.GetNamespace(), p.owner.ClusterName); err != nil {
		return err
	}
	p.set(conditions.DeletionBlocked(p.dependentNames))
	p.stepRan(conditions.StepDependents)
	return nil
}

// releaseOwnerless releases, even while paused, a deleting object that
// never got its owner (no owner reference of the expected kind) and has
// nothing anyone could lose: no Job, no state, nothing ever applied, no
// unknown apply outcome and no live run lease. It reports whether it did.
func (p *pass) releaseOwnerless(ctx context.Context, deleting bool) (bool, error) {
	if !deleting || p.active != nil || !p.owner.Ownerless {
		return false, nil
	}
	if err := p.loadRecords(ctx); err != nil {
		return false, err
	}
	if err := p.observeState(ctx); err != nil {
		return false, err
	}
	if p.stateStatus() != decide.StateAbsent || p.everApplied() || p.unconfirmed() != "" {
		return false, nil
	}
	if held, err := p.runLeaseHeld(ctx); err != nil || held {
		return false, err
	}
	if p.caps().Dependents {
		if err := p.countDependents(ctx); err != nil || len(p.dependentNames) > 0 {
			return false, err
		}
	}
	ctrl.LoggerFrom(ctx).Info("Releasing a deleting object that never got its owner and has nothing to destroy")
	return true, p.release(ctx, decide.Decision{Action: decide.ActionRelease, Reason: decide.ReasonDeletingWithoutState})
}

// release cleans up after a successful destroy, or for an object that
// never applied, then removes the finalizer.
func (p *pass) release(ctx context.Context, d decide.Decision) error {
	if err := p.cleanup(ctx, d.Reason != decide.ReasonHoldsRetainedState); err != nil {
		return err
	}
	crashpoint.Hit(crashpoint.BeforeFinalizerRemoval)
	if d.Reason == decide.ReasonDestroyed {
		p.eventf(corev1.EventTypeNormal, "Destroyed", "The infrastructure was destroyed and the object's Secrets, records and leases removed")
	}
	if err := p.removeFinalizer(ctx); err != nil {
		return err
	}
	// Last: until the finalizer is gone, the finished destroy Job is what
	// tells a pass cut short that the destroy succeeded.
	return p.deleteUnownedJobs(ctx)
}

// cleanup deletes, in order and one by one, the state Secrets, the state
// lock, the input records and the plan key (custody.Keeper.ReleaseState),
// the run and cluster leases (gates.Keeper.DeleteLeases), and this
// object's owner reference on its credentials mirror; it releases the
// state backups (the garbage collector takes them with the object). Every
// protected Secret loses captf.io/state-protection here (or on Retain)
// and nowhere else. The Jobs that ran without an owner reference go once
// the finalizer is removed (deleteUnownedJobs).
//
// An object released on state another object retained (ownState false)
// touches none of that state, its records, its backups or its lock.
func (p *pass) cleanup(ctx context.Context, ownState bool) error {
	if err := p.custody().ReleaseState(ctx, p.obj, p.role.Kind(), p.suffix(), ownState); err != nil {
		return err
	}
	if err := p.e.gates().DeleteLeases(ctx, p.subject()); err != nil {
		return err
	}
	ns := p.obj.GetNamespace()
	if ref := p.eff.IdentityRef; ref != nil && ref.Kind != infrav1.IdentityKindSecret {
		res, err := credentials.ReleaseMirror(ctx, p.e.client(), ns, ref.Name, p.obj)
		if err != nil {
			return fmt.Errorf("releasing the credentials mirror: %w", err)
		}
		if res.Outcome == credentials.OutcomeRemoved {
			p.eventf(corev1.EventTypeNormal, credentials.MirrorRemovedEvent, "Deleted credentials mirror %s: its last user is gone", res.Mirror.Name)
		}
	}
	if ownState {
		return p.custody().ReleaseBackups(ctx, p.obj, p.suffix())
	}
	return nil
}

func (p *pass) removeFinalizer(ctx context.Context) error {
	if err := p.removeEvacuation(ctx); err != nil {
		return err
	}
	base := p.obj.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(p.obj, p.role.Finalizer())
	patch, err := uidPatch(base, p.obj)
	if err != nil {
		return err
	}
	err = p.e.client().Patch(ctx, p.obj, patch)
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	// Released, by this pass or, the object gone already, by another
	// manager: what the engine keeps of it goes either way, and the pass
	// writes no status (nor the transitions it would announce).
	p.released = true
	metrics.Forget(p.role.Kind(), p.obj.GetNamespace(), p.obj.GetName())
	p.waitOver()
	p.e.states.Forget(p.obj.GetUID())
	if err == nil {
		p.eventf(corev1.EventTypeNormal, "FinalizerRemoved", "Removed finalizer %s", p.role.Finalizer())
	}
	// The runner RBAC goes with the namespace's last object; pruning and
	// a failure here wait for the periodic sweep.
	if err := runnerrbac.SweepIfEmpty(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace()); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Sweeping the runner RBAC of the namespace")
	}
	return nil
}

// finishApply is the bookkeeping of a successful apply: the per-run
// Secret's files become the applied record (with the digest the pod ran),
// the evidence of an earlier possible partial apply ends, and the state is
// adopted: the inputs hash on its base Secret and an owner reference to
// the object on every chunk. A success read after a newer apply finished
// (the manager was down) leaves the newer one's record and hash alone.
func (p *pass) finishApply(ctx context.Context, o jobs.Outcome) error {
	prom, err := records.FinishApply(ctx, p.e.client(), p.e.APIReader, p.obj, p.role.Kind(), o.Job, o.Digest,
		jobs.AppliesAfter(p.jobs, o.Job, true), jobs.AppliesAfter(p.jobs, o.Job, false))
	// What the promotion did is said also when a record write after it
	// failed: the pass's status and events go out with its error.
	superseded := prom.Outcome == records.Superseded
	switch {
	case superseded:
		ctrl.LoggerFrom(ctx).Info("Keeping the applied record of a newer apply", "job", o.Job.Name, "applied", prom.Record.Job)
	case prom.Outcome == records.PromotionUnknown:
		p.eventf(corev1.EventTypeWarning, "AppliedInputsUnknown", "The inputs Job %s applied are gone; the older applied record is kept", o.Job.Name)
	case prom.Record != nil && prom.Record.ImageDigest != "" && (prom.Previous == nil || prom.Previous.ImageDigest != prom.Record.ImageDigest):
		p.eventf(corev1.EventTypeNormal, "DigestPinned", "Pinned image %s at %s for later destroy, refresh and drift Jobs", prom.Record.Image, prom.Record.ImageDigest)
	case prom.Outcome != records.AlreadyPromoted && prom.Record != nil && prom.Record.ImageDigest == "":
		p.eventf(corev1.EventTypeWarning, "DigestUnknown", "The pod of Job %s reported no image digest for %s: later destroy, refresh and drift Jobs run the tag, which may move", o.Job.Name, prom.Record.Image)
	}
	if prom.Record != nil {
		if p.w.Status.Source == nil {
			p.w.Status.Source = &infrav1.SourceStatus{}
		}
		p.w.Status.Source.Image, p.w.Status.Source.ImageDigest = prom.Record.Image, prom.Record.ImageDigest
	}
	if err != nil || superseded {
		return err
	}
	return p.adopt(ctx, o.Job.Annotations[infrav1.InputsHashAnnotation], false)
}

// adopt makes the state the Job wrote the object's, with hash, the
// inputs hash of the apply that wrote it (custody.Keeper.ClaimState), and
// says so when the state took a new hash.
func (p *pass) adopt(ctx context.Context, hash string, exact bool) error {
	hashed, err := p.custody().ClaimState(ctx, p.obj, p.role.Kind(), p.suffix(), hash, exact)
	if err != nil {
		return err
	}
	if hashed {
		p.eventf(corev1.EventTypeNormal, "StateAdopted", "Adopted the state written with inputs hash %s", hash)
	}
	return nil
}

// uidPatch is the merge patch from base to obj that also says obj's UID:
// the API server refuses it (a UID cannot change) when the name holds
// another object by then, where a patch by name alone would write that
// one (strip its finalizer).
func uidPatch(base, obj client.Object) (client.Patch, error) {
	data, err := client.MergeFrom(base).Data(obj)
	if err != nil {
		return nil, err
	}
	var patch map[string]any
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, err
	}
	meta, _ := patch["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		patch["metadata"] = meta
	}
	meta["uid"] = string(obj.GetUID())
	if data, err = json.Marshal(patch); err != nil {
		return nil, err
	}
	return client.RawPatch(types.MergePatchType, data), nil
}
