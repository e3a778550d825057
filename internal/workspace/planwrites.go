package workspace

// The engine's side of the TerraformPlan lifecycle's writes: a plan made
// from a Job's result supersedes the older live one, and an approved
// apply's outcome ends its plan. How a plan is written is
// internal/approvals'.

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/jobs"
)

// plansWriter writes the object's TerraformPlans.
func (p *pass) plansWriter() approvals.Writer {
	return approvals.Writer{Client: p.e.client(), Kind: p.role.Kind()}
}

// createPlan turns the plan a Job reported (a blocked apply's, or a
// Manual plan Job's) into a Pending TerraformPlan of reason and
// supersedes the older live one.
func (p *pass) createPlan(ctx context.Context, o jobs.Outcome, reason infrav1.PlanReason) error {
	// The plan names the Job's hash keyed (bookkeeping may run before the
	// pass made the key).
	if _, err := p.ensurePlanKey(ctx); err != nil {
		return err
	}
	pl := approvals.New(p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName(), o.Job.Name, o.Result.Plan, reason, p.keyed(approvals.InputsOf(o.Job)))
	created, superseded, err := p.plansWriter().Publish(ctx, p.obj, pl, p.plans)
	for _, old := range superseded {
		p.eventf(corev1.EventTypeNormal, "PlanSuperseded", "TerraformPlan %s was superseded by %s", old, pl.Name)
	}
	if err != nil || !created {
		return err // !created: made by an earlier pass over the same Job
	}
	p.plans = append([]infrav1.TerraformPlan{*pl}, p.plans...)
	p.eventf(corev1.EventTypeNormal, "PlanReady", "TerraformPlan %s plans inputs hash %s: %s; approve it with kubectl captf approve %s",
		pl.Name, p.keyed(pl.Spec.InputsHash), approvals.Counts(pl.Spec.Summary), p.approveTarget())
	return nil
}

// finishApprovedApply ends the live plan an approved apply ran with in
// the phase its outcome gives it (approvals.EndPhase).
func (p *pass) finishApprovedApply(ctx context.Context, o jobs.Outcome, kind infrav1.RunErrorKind) error {
	name := o.Job.Annotations[infrav1.PlanAnnotation]
	phase := approvals.EndPhase(o.Succeeded, kind == infrav1.RunErrorPlanChanged)
	if name == "" || phase == "" {
		return nil
	}
	for i := range p.plans {
		pl := &p.plans[i]
		if pl.Name != name || !approvals.Live(pl) {
			continue
		}
		if phase == infrav1.PlanPhaseApplied {
			p.eventf(corev1.EventTypeNormal, "PlanApplied", "Job %s applied TerraformPlan %s", o.Job.Name, pl.Name)
		}
		_, err := p.plansWriter().SetPhase(ctx, pl, phase)
		return err
	}
	return nil
}
