package approvals

import (
	"k8s.io/apimachinery/pkg/api/meta"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// MoveFacts are what a live plan's move is chosen from, as the engine read
// them (Move).
type MoveFacts struct {
	// Frozen: the pass is paused or deleting: nothing is superseded.
	Frozen bool
	// Newest: the plan is the target's newest live plan (one live plan per
	// target).
	Newest bool
	// Outcome is the terminal phase the apply of the plan reached
	// (Applied, Failed), "" when none.
	Outcome infrav1.PlanPhase
	// Moot says why the plan no longer stands for an apply ("" when it
	// does, or while that cannot be told: a Job runs, the inputs cannot
	// be built).
	Moot string
}

// Move is the phase a plan moves to before the decision ("" when it stays
// as it is) and, for a live plan superseded, why. An apply's outcome ends
// a live plan; else an older live plan, or a moot one, is superseded (not
// by a frozen pass); else an approval is recorded (Approved), and a plan
// another writer made (clusterctl move) is phased Pending. A superseded
// plan whose approval landed after it was superseded moves nowhere but is
// marked (LateApproval).
func Move(pl *infrav1.TerraformPlan, f MoveFacts) (to infrav1.PlanPhase, why string) {
	if !Live(pl) {
		return "", ""
	}
	if f.Outcome != "" {
		return f.Outcome, ""
	}
	switch {
	case f.Frozen:
	case !f.Newest:
		why = "a newer plan replaced it"
	default:
		why = f.Moot
	}
	switch {
	case why != "":
		return infrav1.PlanPhaseSuperseded, why
	case Approved(pl) && Phase(pl) != infrav1.PlanPhaseApproved:
		return infrav1.PlanPhaseApproved, ""
	case Phase(pl) == "":
		return infrav1.PlanPhasePending, ""
	}
	return "", ""
}

// EndPhase is the terminal phase the outcome of an apply that ran a plan
// gives the plan: Applied when it succeeded, Failed when it found the plan
// changed; "" otherwise (a failed step keeps the plan Approved, for the
// retry).
func EndPhase(succeeded, planChanged bool) infrav1.PlanPhase {
	switch {
	case succeeded:
		return infrav1.PlanPhaseApplied
	case planChanged:
		return infrav1.PlanPhaseFailed
	}
	return ""
}

// LateApproval: the approval of a superseded plan landed after it was
// superseded (the approval raced the supersession) and is not marked yet:
// Approved=False/ApprovalIgnored and one Warning naming the live plan are
// due.
func LateApproval(pl *infrav1.TerraformPlan) bool {
	if Phase(pl) != infrav1.PlanPhaseSuperseded || !Approved(pl) {
		return false
	}
	// Superseded after its approval was seen, or already marked.
	c := meta.FindStatusCondition(pl.Status.Conditions, infrav1.ApprovedCondition)
	return c == nil || c.Reason == infrav1.PlanNotApprovedReason || c.Reason == infrav1.PlanPendingReason
}
