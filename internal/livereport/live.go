package livereport

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
)

// Types are the conditions a live report can cover.
var Types = []string{infrav1.ApplyJobSucceededCondition, infrav1.DriftJobSucceededCondition, infrav1.RestoreJobSucceededCondition,
	infrav1.StateReadableCondition, infrav1.DriftDetectedCondition}

// startWaits are the reasons a Job's operation condition carries while
// the Job waits to start: once it starts, the wait is over.
var startWaits = map[string]bool{
	infrav1.WaitingForRunLeaseReason: true, infrav1.WaitingForClusterOperationReason: true, infrav1.WaitingForMachineOperationsReason: true,
	infrav1.WaitingForJobSlotReason: true, infrav1.IdentityNotAllowedReason: true, infrav1.DurableInputsMissingReason: true,
	infrav1.RuntimeCannotKeepStateReason: true, infrav1.NamespaceTerminatingReason: true,
}

// heldReasons hold a due Job for what the object says: each pass that
// decides on the Job reports them again.
var heldReasons = map[string]bool{infrav1.JobPolicyInvalidReason: true, infrav1.InputsTooLargeReason: true}

// approvalWaits say a change waits for its TerraformPlan's approval: the
// outcome of the plan or blocked apply Job that made the plan, said again
// by each pass while the plan waits or the decision waits for it. Once
// approved, the apply that starts ends them: while it runs the condition
// says what it said before the plan.
var approvalWaits = map[string]bool{infrav1.PlanAwaitingApprovalReason: true, infrav1.DestructivePlanBlockedReason: true}

// runningReasons say a Job or a holder is at work now: a refresh or drift
// Job, or a drift remediation's apply, runs (each pass that finds it
// running says so again), another holder keeps the state lock (each pass
// that reads the lock).
var runningReasons = map[string]bool{infrav1.DriftJobRunningReason: true, infrav1.DriftRemediatingReason: true, infrav1.StateLockedReason: true}

// Live: c is a live report (a Job stopped for its image is a record).
func Live(c metav1.Condition) bool {
	return startWaits[c.Reason] || heldReasons[c.Reason] || runningReasons[c.Reason] || approvalWaits[c.Reason] || conditions.PullFailing(c)
}
