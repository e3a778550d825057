package workspace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/echo"
	"captf.io/captf/internal/metrics"
)

// applyOutputs maps the state's outputs onto the object and latches
// provisioned: an apply succeeded (the state carries its inputs hash), the
// outputs are valid and the health is not pending.
func (p *pass) applyOutputs() {
	p.stepRan(conditions.StepOutputs)
	c := p.role.Outputs(p.obj, p.owner, p.stored.state)
	p.contract = c
	// A new reading is a new serial or a succeeded apply, refresh or drift
	// Job; passes over the same reading, and failed Jobs, do not count.
	newReading := p.stored.state.Serial != p.role.View(p.before).Status.ObservedStateSerial || p.books.newSample
	for _, cond := range c.Conditions() {
		if cond.Type == infrav1.InfrastructureHealthyCondition {
			cond = p.providerIDHealth(cond, c, newReading)
			p.countSample(cond, newReading)
		}
		p.set(cond)
	}
	applied := p.role.Apply(p.obj, c)
	p.specChanged = p.specChanged || applied.SpecChanged
	p.roleEvents(applied.Events)
	if c.HealthPending() && newReading {
		p.w.Status.PendingRefreshes++
	} else if !c.HealthPending() {
		p.w.Status.PendingRefreshes = 0
	}
	prov := p.w.Status.Initialization.Provisioned
	if (prov == nil || !*prov) && p.stateInputsHash() != "" && c.Provisionable() {
		p.w.Status.Initialization.Provisioned = ptr.To(true)
		p.eventf(corev1.EventTypeNormal, "Provisioned", "The infrastructure is provisioned")
	}
	for _, c := range p.role.Settle(p.obj) {
		p.set(c)
	}
}

// patchStatus computes the conditions and Ready and writes status (and
// the spec fields the outputs set) once, as one merge patch computed
// before either request so that neither response loses the other's part.
// Only a pass that completed (ok) vouches for the object's generation; a
// failed one keeps the generation the last completed pass observed. A
// completed pass that writes the spec vouches for the generation its own
// write makes (the read one plus one): it computed that spec and the
// status from the same reading. When the write's response shows another
// generation (another hand's spec write met it), it vouches for the one it
// read, and the update of that write brings the next pass.
func (p *pass) patchStatus(ctx context.Context, ok bool) error {
	if p.released {
		return nil
	}
	// The object itself is written only when its metadata or spec moved
	// (a contract field, the block-move annotation lifted): a write that
	// changes nothing has no echo to expect.
	metaMoved, specMoved := echo.Moved(p.before, p.obj)
	writeMain := p.specChanged && (metaMoved || specMoved)
	served := p.obj.GetGeneration()
	if writeMain && specMoved {
		served++
	}
	gen := served
	if !ok {
		gen = p.w.Status.ObservedGeneration
	}
	st := p.w.Status
	p.endLiveReports(st, ok)
	st.Conditions = p.statusConditions(ctx, st, gen, ok)
	st.ObservedGeneration = gen
	p.events = append(p.events, conditions.Transitions(p.role.View(p.before).Status.Conditions, st.Conditions)...)
	// Counters move once the status they count is written: a failed patch
	// redoes the pass.
	p.observe(func() { p.observeConditions(st.Conditions) })
	return p.writeStatus(ctx, st, served, writeMain, ok)
}

// statusConditions are the conditions the pass leaves (conditions.Status),
// looked at for generation gen; only a pass that completed (ok) ran its
// steps.
func (p *pass) statusConditions(ctx context.Context, st *infrav1.WorkspaceStatus, gen int64, ok bool) []metav1.Condition {
	prov := st.Initialization.Provisioned
	var ran []conditions.Step
	if ok {
		ran = p.ran
	}
	in := conditions.Pass{Previous: st.Conditions, Reported: p.conds, Dropped: p.dropped, Ran: ran, FromState: p.applyFromState(ok),
		Dependents: p.caps().Dependents, Provisioned: prov != nil && *prov, ReadyFollowsApplies: p.caps().ReadyFollowsApplies,
		Generation: gen, Now: metav1.NewTime(p.now)}
	if unsaid := conditions.Unsaid(in); len(unsaid) > 0 {
		// A step ran without saying what it owns: the stale value goes
		// rather than stay. Every step says its facts, so this is a bug.
		ctrl.LoggerFrom(ctx).Error(nil, "A step of the pass did not say its conditions; they are removed (a CAPTF bug, please report it)", "conditions", unsaid)
		if p.e.Options.StrictConditions {
			panic(fmt.Sprintf("the pass ran the steps %v without saying the conditions %v they own", ran, unsaid))
		}
	}
	return conditions.Status(in)
}

// writeStatus writes the object as the pass leaves it, as one merge patch:
// first the object itself when writeMain (its metadata or spec moved),
// then its status. served is the generation the pass vouches for; when the
// object's write met another hand's spec write, a completed pass (ok)
// vouches for the generation it read instead.
func (p *pass) writeStatus(ctx context.Context, st *infrav1.WorkspaceStatus, served int64, writeMain, ok bool) error {
	patch, empty, err := p.statusPatch()
	if err != nil || empty {
		return err
	}
	// Remembered before the writes: an echo may come before its response.
	// Not when the pass wrote the object itself (its finalizer): a relist
	// may fold that write's update, which must bring the next pass, into
	// the echo.
	if p.obj.GetResourceVersion() == p.read {
		p.expectOwnWrites(served, writeMain)
	} else {
		p.e.ForgetEcho(p.obj)
	}
	if writeMain {
		written := p.obj.DeepCopyObject().(client.Object)
		if err := p.e.client().Patch(ctx, written, patch); err != nil {
			p.e.ForgetEcho(p.obj)
			return fmt.Errorf("writing the contract fields: %w", err)
		}
		if written.GetGeneration() != served {
			p.e.ForgetEcho(p.obj)
			if ok {
				observed(st, p.obj.GetGeneration())
				if patch, _, err = p.statusPatch(); err != nil {
					return err
				}
			}
		}
	}
	if err := p.e.client().Status().Patch(ctx, p.obj.DeepCopyObject().(client.Object), patch); err != nil {
		p.e.ForgetEcho(p.obj)
		return client.IgnoreNotFound(err)
	}
	return nil
}

// observed says that every condition, and the status, were looked at for
// generation gen.
func observed(st *infrav1.WorkspaceStatus, gen int64) {
	for i := range st.Conditions {
		st.Conditions[i].ObservedGeneration = gen
	}
	st.ObservedGeneration = gen
}

// statusPatch is the merge patch from the object as read to the object as
// the pass leaves it; empty when they are the same.
func (p *pass) statusPatch() (client.Patch, bool, error) {
	data, err := client.MergeFrom(p.before).Data(p.obj)
	if err != nil {
		return nil, false, err
	}
	return client.RawPatch(client.Merge.Type(), data), string(data) == "{}", nil
}

// applyFromState is what ApplyJobSucceeded says where no Job has
// reported one (conditions.Status): True when a pass that completed (ok)
// read a state holding an apply of the current inputs and the attempt
// record (which moves with the object) knows of no later apply that may
// have changed it, else Unknown NoApplyYet. Status is not carried by
// clusterctl move and finished Jobs can be deleted, while the state, its
// inputs hash and the records stay.
func (p *pass) applyFromState(ok bool) metav1.Condition {
	if ok && p.inputs.attempt.Settled() && p.stored.state != nil && p.inputsInState() {
		return conditions.AppliedInState(p.stored.state.Serial)
	}
	return conditions.NoApplyYet
}

// inputsInState: the state was written by an apply of the current inputs
// (for a machine, which never re-applies, by any apply of it).
func (p *pass) inputsInState() bool {
	stateHash := p.stateInputsHash()
	if p.inputs.hash == "" {
		return !p.role.Mutable() && stateHash != ""
	}
	return p.inputs.hash == stateHash
}

// observeConditions exports the object's condition gauges and counts
// what a condition entering False says (metrics.ObserveConditions), and a
// machine's unhealthy samples.
func (p *pass) observeConditions(conds []metav1.Condition) {
	metrics.ObserveConditions(p.role.Kind(), p.obj.GetNamespace(), p.obj.GetName(), p.role.View(p.before).Status.Conditions, conds)
	if r, ok := p.remediator(); ok {
		metrics.SetUnhealthySamples(p.obj.GetNamespace(), p.obj.GetName(), r.UnhealthySamples(p.obj))
	}
}
