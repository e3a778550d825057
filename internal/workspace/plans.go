package workspace

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/guard"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/plan"
)

// The destructive guard. Every apply of a TerraformCluster plans first
// (the runner's --guard-deletes) and stops before a plan that deletes or
// replaces a resource; the manager turns the blocked plan into a
// TerraformPlan (reason Destructive) that a user approves. The approved
// apply runs with --expect-plan: the runner plans again and applies only
// when the fresh plan fingerprints to the approved one. The fingerprint is
// keyed with the object's plan key Secret, so an approval binds the plan's
// content, not a source revision.

// guarded: the object's applies go through the destructive guard.
func (p *pass) guarded() bool { return p.caps().GuardsEveryApply }

// planned: the object can have TerraformPlans (a cluster's, or a pool's
// for an exports change).
func (p *pass) planned() bool { return p.caps().Planned() }

// guard is what the pass read, as the rules of its guarded changes read
// it (internal/guard): its plans as moved so far, its input records, its
// current inputs' hashes and the state's inputs hash.
func (p *pass) guard() guard.Facts {
	return guard.Facts{Keying: p.keying(), Plans: p.plans, GuardsExports: p.caps().GuardsExports, Manual: p.manual(),
		InputsHash: p.inputs.hash, Approval: p.inputs.approval, Exports: p.inputs.exports, Held: p.inputs.held,
		Attempt: p.inputs.attempt, Applied: p.inputs.applied,
		StateAbsent: p.stateStatus() == decide.StateAbsent, StateInputsHash: p.stateInputsHash(), Target: p.approveTarget()}
}

// observePlans lists the object's TerraformPlans (from the cache).
func (p *pass) observePlans(ctx context.Context) error {
	if !p.planned() {
		return nil
	}
	var err error
	p.plans, err = approvals.List(ctx, p.e.client(), p.obj)
	return err
}

// livePlan is the object's newest live plan (nil when none).
func (p *pass) livePlan() *infrav1.TerraformPlan { return approvals.Newest(p.plans) }

// movePlans moves the plans along before the decision, in the pass's
// memory, as guard.MovePlans says from what the pass read, and names the
// live plan in status.pendingPlanRef. The decision sees the plans as
// moved; the chore SyncPlans writes the moves, and PrunePlans prunes the
// older terminal plans. A frozen pass (paused or deleting) records
// approvals, outcomes and the reference, and supersedes nothing.
func (p *pass) movePlans(frozen bool) {
	p.planMoves = nil
	if !p.planned() {
		return
	}
	m := guard.Moving{Frozen: frozen, Running: p.active != nil, Jobs: p.jobs}
	if !frozen && p.active == nil && p.guard().PlanInputs() != "" {
		m.NoApplyDue = p.snapshot(false).NoApplyDue()
	}
	p.plans, p.planMoves = p.guard().MovePlans(m)
	if m.NoApplyDue && p.livePlan() == nil {
		p.reportWithdrawn()
	}
	p.setPendingPlanRef()
}

// prunablePlans counts the terminal plans beyond the newest
// approvals.MaxFinished (none for a frozen pass, which prunes nothing).
func (p *pass) prunablePlans(frozen bool) int {
	if frozen {
		return 0
	}
	return len(approvals.Prunable(p.plans))
}

// writePlanMoves (the chore SyncPlans) writes the moves movePlans
// decided. A move whose plan changed meanwhile is not written, says
// nothing, and leaves the plan as read.
func (p *pass) writePlanMoves(ctx context.Context) error {
	w := p.plansWriter()
	for _, m := range p.planMoves {
		pl := m.Read
		if m.LateApproval {
			p.eventf(corev1.EventTypeWarning, "PlanSuperseded", "TerraformPlan %s was approved by %s after it was superseded; the approval is ignored and %s",
				pl.Name, pl.Spec.ApprovedBy, m.Current)
			if err := w.SetStatus(ctx, pl, infrav1.PlanPhaseSuperseded); err != nil {
				return err
			}
			continue
		}
		changed, err := w.SetPhase(ctx, pl, m.To)
		if err != nil {
			return err
		}
		switch {
		case !changed:
			// Changed meanwhile: the plan stays as read (pruning sees it
			// so), and the next pass decides again on it.
			if m.I < len(p.plans) && p.plans[m.I].Name == pl.Name {
				p.plans[m.I] = *pl
			}
		case m.Why != "":
			typ := corev1.EventTypeNormal
			if approvals.Approved(pl) {
				typ = corev1.EventTypeWarning
			}
			p.eventf(typ, "PlanSuperseded", "TerraformPlan %s was superseded: %s", pl.Name, m.Why)
		case m.To == infrav1.PlanPhaseApproved:
			p.eventf(corev1.EventTypeNormal, "PlanApproved", "TerraformPlan %s was approved by %s", pl.Name, pl.Spec.ApprovedBy)
		}
	}
	return nil
}

// reportWithdrawn: once the change a blocked apply (or a Manual plan)
// waited for is moot and no apply is due, ApplyJobSucceeded reports the
// last real outcome again (guard.Withdrawn). The history is read only when
// the condition waits for an approval.
func (p *pass) reportWithdrawn() {
	if !guard.WaitsForApproval(p.current(infrav1.ApplyJobSucceededCondition)) {
		return
	}
	if c, ok := guard.Withdrawn(p.plans, p.history()); ok {
		p.set(c)
	}
}

// approvalAwaited says again that a change waits for an approval while a
// TerraformPlan of the object waits for one (guard.StillAwaited).
func (p *pass) approvalAwaited() {
	if c := p.current(infrav1.ApplyJobSucceededCondition); guard.StillAwaited(c, p.plans) {
		p.report(*c)
	}
}

// setPendingPlanRef names the live plan in the status.
func (p *pass) setPendingPlanRef() {
	var ref *infrav1.PlanReference
	if pl := p.livePlan(); pl != nil {
		ref = &infrav1.PlanReference{Name: pl.Name}
	}
	if p.w.PendingPlanRef != nil {
		*p.w.PendingPlanRef = ref
	}
}

// manual: the object's applies wait for an approved plan (applyPolicy
// Manual on a TerraformCluster).
func (p *pass) manual() bool { return p.w.Manual }

// finishPlan records a Manual plan Job's plan: an empty one needs no
// approval (the apply runs, expecting it still empty); any other becomes
// a Pending TerraformPlan.
func (p *pass) finishPlan(ctx context.Context, o jobs.Outcome) error {
	rp := o.Result.Plan
	o.Job.Annotations[infrav1.PlanHashAnnotation] = rp.Hash
	if rp.Hash == plan.EmptyPlanHash {
		p.eventf(corev1.EventTypeNormal, "PlanReady", "Job %s planned no change: the apply runs without approval, expecting the plan still empty", o.Job.Name)
		return nil
	}
	return p.createPlan(ctx, o, infrav1.PlanReasonManual)
}

// approveTarget is the object as kubectl captf approve names it.
func (p *pass) approveTarget() string {
	return p.caps().ShortName + "/" + p.obj.GetName()
}
