package conditions

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// InputsFacts are what InputsApplied is computed from.
type InputsFacts struct {
	// Deleting: the object has a deletion timestamp.
	Deleting bool
	// JobRunning: a Job of the object runs; ActiveOp and ActiveJob are
	// its operation and name.
	JobRunning bool
	ActiveOp   decide.Operation
	ActiveJob  string
	// StateObserved: the pass read the state, or failed to.
	StateObserved bool
	// InputsBuilt: the current inputs build (they have a hash).
	InputsBuilt bool
	// InState: the state was written by an apply of the current inputs;
	// for a machine, which never re-applies and whose inputs may no longer
	// build, by any apply of it.
	InState bool
	// HeldPlan names the TerraformPlan a pool's cluster exports change
	// waits on ("" when none holds it).
	HeldPlan string
}

// InputsApplied is the InputsApplied condition, for tools that wait on
// it; ok is false when the pass leaves it as it was: the object is being
// deleted, a check (not an apply) runs, or the state was not read.
func InputsApplied(f InputsFacts, d decide.Decision) (c metav1.Condition, ok bool) {
	if f.Deleting || (f.JobRunning && f.ActiveOp != decide.OpApply) || (!f.JobRunning && !f.StateObserved) {
		return metav1.Condition{}, false
	}
	c = metav1.Condition{Type: infrav1.InputsAppliedCondition}
	switch {
	case !f.InputsBuilt && f.InState:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, infrav1.InputsAppliedReason, "The machine's inputs are applied; a machine never re-applies"
	case !f.InputsBuilt:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, infrav1.InputsUnavailableReason, "The current inputs cannot be built"
	case f.JobRunning:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.ApplyRunningReason, fmt.Sprintf("Job %s applies the inputs", f.ActiveJob)
	case f.HeldPlan != "":
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.AwaitingApprovalReason,
			fmt.Sprintf("The cluster exports change waits for approval of TerraformPlan %s; the pool keeps the exports of its last successful apply", f.HeldPlan)
	case f.InState:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, infrav1.InputsAppliedReason, "The current inputs are applied"
	case d.Reason == decide.ReasonAwaitingApproval || d.Reason == decide.ReasonPlanAwaitingApproval:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.AwaitingApprovalReason, "The current inputs wait for approval"
	case ApplyBackoff(d.Reason):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.InputsApplyFailedReason, "The apply of the current inputs failed; it is retried after a backoff"
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.ApplyPendingReason, "An apply of the current inputs is due"
	}
	return c, true
}

// ApplyBackoff: the wait is an apply's backoff after a failure.
func ApplyBackoff(r decide.Reason) bool {
	for _, apply := range []decide.Reason{decide.ReasonNoState, decide.ReasonStateWithoutInputsHash, decide.ReasonInputsChanged, decide.ReasonUnconfirmedApply, decide.ReasonLastApplyFailed} {
		if r == decide.Backoff(apply) {
			return true
		}
	}
	return false
}
