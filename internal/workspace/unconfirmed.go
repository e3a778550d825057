package workspace

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/gates"
	"captf.io/captf/internal/records"
)

// An apply whose outcome nobody knows: its Job ended without a runner
// result after the runner started (killed for its memory, say), or it
// vanished (deleted, node lost) before it was bookkept. It may have
// changed resources, so the attempt record names it
// (captf.io/unconfirmed-apply) until an apply started after it succeeds:
// an apply stays due meanwhile, and an object without a state holds
// (StateReadable=False/ApplyOutcomeUnknown) rather than forget what the
// Job may have created.

// unconfirmed names the apply Job whose outcome is unknown ("" when none).
func (p *pass) unconfirmed() string {
	if a := p.inputs.attempt; a != nil {
		return a.UnconfirmedApply
	}
	return ""
}

// markUnconfirmed records job as an apply whose outcome is unknown
// (records.MarkPossiblyApplied); newer are the apply Jobs that finished
// after it.
func (p *pass) markUnconfirmed(ctx context.Context, job string, newer []string) error {
	return records.MarkPossiblyApplied(ctx, p.e.client(), p.e.APIReader, p.obj, p.role.Kind(), job, newer, true, p.caps().GuardsExports)
}

// observeVanished notes the Job status.activeJob names, found gone
// before it was bookkept, and reads whether every pod of it finished; the
// chore RecordVanishedJob writes what that means.
func (p *pass) observeVanished(ctx context.Context, aj *infrav1.ActiveJob) error {
	_, pods, err := p.e.gates().ReadHolder(ctx, p.obj.GetNamespace(), aj.Name)
	if err != nil {
		return err
	}
	p.vanished.job = aj.DeepCopy()
	p.vanished.podsDone = len(pods) > 0 && !slices.ContainsFunc(pods, func(pod corev1.Pod) bool { return !gates.PodFinished(&pod) })
	return nil
}

// recordVanished (the chore RecordVanishedJob): the vanished Job's result
// is lost. An apply becomes unconfirmed; every operation is reported as
// interrupted, once what it means is written. Until then status.activeJob
// keeps naming the Job (a failed pass writes its status too): the next
// pass finds it gone again and records it.
func (p *pass) recordVanished(ctx context.Context) error {
	if err := p.writeVanished(ctx); err != nil {
		p.w.Status.ActiveJob = p.vanished.job.DeepCopy()
		return err
	}
	c, ev := conditions.JobVanished(p.vanished.job.Name, decide.Operation(p.vanished.job.Operation))
	p.set(c)
	p.events = append(p.events, ev)
	return nil
}

// writeVanished marks a vanished apply as possibly applied, and releases
// the vanished Job's run lease when every pod of it finished.
func (p *pass) writeVanished(ctx context.Context) error {
	aj := p.vanished.job
	if decide.Operation(aj.Operation) == decide.OpApply {
		// It was the running Job: nothing of the object finished after it.
		if err := p.markUnconfirmed(ctx, aj.Name, nil); err != nil {
			return err
		}
	}
	// The run lease goes at once only when every pod of the Job finished.
	// A pod still stopping, or gone without a trace (force-deleted, its
	// node lost), may still write the state: the lease is waited out like
	// any holder that ran (gates.LeaseTakeable), which it now says it is.
	if p.vanished.podsDone {
		return p.releaseRunLease(ctx, aj.Name)
	}
	// Whatever the gate's setting now, a cluster lease it holds is marked.
	p.markLeasesCreated(ctx, aj.Name, "")
	return nil
}

// confirmNoResources consumes captf.io/confirm-no-resources=<job>: when it
// names the unconfirmed apply, the user confirmed that the Job created
// nothing, so the pass forgets it in its memory and the chore
// ConfirmNoResources writes that on the record and takes the annotation
// off. Any other value is ignored (and logged).
func (p *pass) confirmNoResources(ctx context.Context) {
	v, ok := p.obj.GetAnnotations()[infrav1.ConfirmNoResourcesAnnotation]
	if !ok {
		return
	}
	job := p.unconfirmed()
	if job == "" || v != job {
		ctrl.LoggerFrom(ctx).Info("Ignoring captf.io/confirm-no-resources: it does not name the apply whose outcome is unknown", "value", v, "unconfirmed", job)
		return
	}
	p.inputs.attempt.UnconfirmedApply, p.inputs.attempt.MayHaveApplied = "", false
	p.confirmedJob = job
}

// writeNoResources (the chore ConfirmNoResources) clears the unconfirmed
// apply the user confirmed created nothing from the attempt record, and
// removes the annotation.
func (p *pass) writeNoResources(ctx context.Context) error {
	if _, err := records.ClearUnconfirmedApply(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName()); err != nil {
		return err
	}
	// The annotation goes in a patch of its own, leaving the pass's
	// status patch computed against the same base.
	target := p.obj.DeepCopyObject().(client.Object)
	patch := client.MergeFrom(target.DeepCopyObject().(client.Object))
	for _, o := range []client.Object{target, p.obj, p.before} {
		a := o.GetAnnotations()
		delete(a, infrav1.ConfirmNoResourcesAnnotation)
		o.SetAnnotations(a)
	}
	if err := p.e.client().Patch(ctx, target, patch); err != nil {
		return fmt.Errorf("removing %s: %w", infrav1.ConfirmNoResourcesAnnotation, err)
	}
	p.eventf(corev1.EventTypeNormal, "NoResourcesConfirmed", "Confirmed that Job %s created nothing (%s); it is forgotten", p.confirmedJob, infrav1.ConfirmNoResourcesAnnotation)
	return nil
}
