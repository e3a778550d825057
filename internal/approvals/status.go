package approvals

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Conditions are a plan's Ready and Approved conditions in phase.
func Conditions(pl *infrav1.TerraformPlan, phase infrav1.PlanPhase) (ready, approved metav1.Condition) {
	ready = metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: string(phase), ObservedGeneration: pl.Generation}
	approved = metav1.Condition{Type: infrav1.ApprovedCondition, Status: metav1.ConditionFalse, Reason: infrav1.PlanPendingReason, ObservedGeneration: pl.Generation}
	switch phase {
	case infrav1.PlanPhasePending:
		ready.Message, approved.Message = "The plan waits for approval", "Not approved yet"
	case infrav1.PlanPhaseApproved:
		ready.Message = "Approved; its apply runs with --expect-plan"
	case infrav1.PlanPhaseApplied:
		ready.Message = "The approved apply succeeded"
	case infrav1.PlanPhaseSuperseded:
		ready.Status, ready.Message = metav1.ConditionFalse, "A newer plan replaced it, or the inputs no longer hash to it"
	case infrav1.PlanPhaseFailed:
		ready.Status, ready.Message = metav1.ConditionFalse, "The approved apply planned other changes; nothing was applied"
	}
	switch {
	case Approved(pl) && phase == infrav1.PlanPhaseSuperseded:
		approved.Reason, approved.Message = infrav1.PlanApprovalIgnoredReason, "Approved by "+pl.Spec.ApprovedBy+", but the plan was superseded before it was applied"
	case Approved(pl):
		approved.Status, approved.Reason, approved.Message = metav1.ConditionTrue, infrav1.PlanApprovedReason, "Approved by "+pl.Spec.ApprovedBy
	case phase != infrav1.PlanPhasePending:
		approved.Reason, approved.Message = infrav1.PlanNotApprovedReason, "The plan ended without approval"
	}
	return ready, approved
}
