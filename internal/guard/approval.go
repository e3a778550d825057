package guard

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
)

// WaitsForApproval: ApplyJobSucceeded, as the pass has it (c), says a
// change waits for an approval (a destructive plan blocked, or a Manual
// plan awaiting its approval).
func WaitsForApproval(c *metav1.Condition) bool {
	return c != nil && (c.Reason == infrav1.DestructivePlanBlockedReason || c.Reason == infrav1.PlanAwaitingApprovalReason)
}

// StillAwaited: a change waits for an approval (c, WaitsForApproval) and
// a TerraformPlan of plans waits for one (Pending), so that the wait is
// said again whatever the pass decides (another Job may run meanwhile).
func StillAwaited(c *metav1.Condition, plans []infrav1.TerraformPlan) bool {
	if !WaitsForApproval(c) {
		return false
	}
	for i := range plans {
		if approvals.Phase(&plans[i]) == infrav1.PlanPhasePending {
			return true
		}
	}
	return false
}

// Withdrawn is ApplyJobSucceeded once the change a blocked apply (or a
// Manual plan) waited for is moot and no apply is due: the last real
// outcome of history (LastRealApply) again, naming the withdrawn Job and
// its plan (the superseded one of plans, or "deleted"). ok is false when
// no apply ever really ran: the condition stays. The caller asks only
// when the condition waits for an approval (WaitsForApproval), so that a
// pass that superseded the plan but could not write its status (a crash,
// a failed patch) is made good by the next one.
func Withdrawn(plans []infrav1.TerraformPlan, history []decide.FinishedJob) (c metav1.Condition, ok bool) {
	plan := "its plan was deleted"
	for i := range plans {
		if approvals.Phase(&plans[i]) == infrav1.PlanPhaseSuperseded {
			plan = "TerraformPlan " + plans[i].Name
			break
		}
	}
	last, withdrawn, found := LastRealApply(history)
	if !found {
		return c, false
	}
	change := fmt.Sprintf("the change planned (%s)", plan)
	if withdrawn != "" {
		change = fmt.Sprintf("the change Job %s stopped before (%s)", withdrawn, plan)
	}
	return conditions.AppliedBefore(last, change+" was withdrawn"), true
}
