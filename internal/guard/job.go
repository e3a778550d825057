package guard

import (
	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/plan"
)

// JobGuard is how the Job of op, rendering inputs that hash to
// inputsHash, is guarded, and the approved plan it applies (nil: none):
//   - a pool's apply that renders other cluster exports than its last
//     success (exportsGuard, ExportsGuarded as read before the plan key
//     was made) stops before deletes and replaces until its ExportsChange
//     plan is approved, by approval hash;
//   - the apply of an object whose every apply is guarded (everyApply)
//     stops before deletes and replaces, unless it applies its approved
//     plan (--expect-plan), or, under Manual, a plan Job planned no change
//     since the last apply (the plan is expected empty; history, the
//     object's finished Jobs, is read only then).
func (f Facts) JobGuard(op decide.Operation, inputsHash string, everyApply, exportsGuard bool, history func() []decide.FinishedJob) (jobs.Guard, *infrav1.TerraformPlan) {
	var g jobs.Guard
	var approved *infrav1.TerraformPlan
	if exportsGuard {
		g = jobs.Guard{Deletes: true, InputsHash: f.Approval}
		if approved = f.Approved(); approved != nil {
			g.AllowDeletesHash = f.Approval
		}
	}
	if op == decide.OpApply && everyApply {
		g = jobs.Guard{Deletes: true, InputsHash: inputsHash}
		if approved = f.Approved(); approved != nil {
			g = jobs.Guard{ExpectPlan: approved.Spec.PlanHash}
		} else if f.PlanStatus(history()) == decide.PlanEmpty {
			g = jobs.Guard{ExpectPlan: plan.EmptyPlanHash}
		}
	}
	return g, approved
}
