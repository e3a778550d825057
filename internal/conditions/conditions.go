package conditions

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// Lifecycle is Deleting and Paused, the two state conditions every pass
// reports.
func Lifecycle(deleting, paused bool) []metav1.Condition {
	del := metav1.Condition{Type: infrav1.DeletingCondition, Status: metav1.ConditionFalse, Reason: infrav1.NotDeletingReason}
	if deleting {
		del.Status, del.Reason, del.Message = metav1.ConditionTrue, infrav1.DeletingReason, "The object is being deleted"
		if paused {
			del.Message = "The object is being deleted; deletion waits until it is unpaused"
		}
	}
	pause := metav1.Condition{Type: infrav1.PausedCondition, Status: metav1.ConditionFalse, Reason: infrav1.NotPausedReason}
	if paused {
		pause.Status, pause.Reason, pause.Message = metav1.ConditionTrue, infrav1.PausedReason, "The object or its Cluster is paused: no Job starts"
	}
	return []metav1.Condition{del, pause}
}

// OpType is the condition an operation's Job reports on.
func OpType(op decide.Operation) string {
	switch op {
	case decide.OpRefresh, decide.OpDrift:
		return infrav1.DriftJobSucceededCondition
	case decide.OpRestore:
		return infrav1.RestoreJobSucceededCondition
	}
	return infrav1.ApplyJobSucceededCondition
}

// FailReason is the reason an operation's failed Job reports.
func FailReason(op decide.Operation) string {
	switch op {
	case decide.OpDestroy:
		return infrav1.DestroyFailedReason
	case decide.OpRefresh, decide.OpDrift:
		return infrav1.DriftJobFailedReason
	case decide.OpRestore:
		return infrav1.RestoreFailedReason
	}
	return infrav1.ApplyFailedReason
}

// NoApplyYet is ApplyJobSucceeded before any apply, plan or destroy Job
// reported.
var NoApplyYet = metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionUnknown, Reason: infrav1.NoApplyYetReason,
	Message: "No apply has finished yet"}

// NotBlocked is a TerraformCluster's DeletionBlocked while nothing holds
// its deletion.
var NotBlocked = metav1.Condition{Type: infrav1.DeletionBlockedCondition, Status: metav1.ConditionFalse, Reason: infrav1.NotBlockedReason,
	Message: "No TerraformMachine or TerraformMachinePool holds the deletion"}

// DeletionBlocked is what the count of a deleting cluster's machines and
// pools says, names being theirs (machines first): NotBlocked when there
// are none, else DependentsExist naming the first six.
func DeletionBlocked(names []string) metav1.Condition {
	if len(names) == 0 {
		return NotBlocked
	}
	return metav1.Condition{Type: infrav1.DeletionBlockedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DependentsExistReason,
		Message: fmt.Sprintf("%d TerraformMachines and TerraformMachinePools of the cluster still exist: %s", len(names), strings.Join(names[:min(len(names), 6)], ", "))}
}

// FirstVisit are the conditions an object carries from its first pass, at
// their starting values, until a pass sets them otherwise (dependents: a
// kind whose deletion waits for others, which also reports
// DeletionBlocked).
func FirstVisit(dependents bool) []metav1.Condition {
	conds := []metav1.Condition{
		{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionUnknown, Reason: infrav1.WaitingForProvisioningReason, Message: "No apply has started yet"},
		{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionUnknown, Reason: infrav1.DriftNotCheckedReason, Message: "No drift check has finished yet"},
		{Type: infrav1.DriftJobSucceededCondition, Status: metav1.ConditionUnknown, Reason: infrav1.DriftNotCheckedReason, Message: "No refresh or drift Job has finished yet"},
		{Type: infrav1.OutputsValidCondition, Status: metav1.ConditionUnknown, Reason: infrav1.OutputsPendingReason, Message: "No state to read outputs from yet"},
	}
	if dependents {
		conds = append(conds, NotBlocked)
	}
	return conds
}

// NotProvisioned is InfrastructureHealthy once a first apply ended
// without leaving a state.
var NotProvisioned = metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionUnknown, Reason: infrav1.WaitingForProvisioningReason,
	Message: "No apply has provisioned the infrastructure yet"}

// ReadyInputs are the conditions Ready summarises: all of them before the
// object is provisioned; after, only health (and, for a kind whose Ready
// follows its applies, a pool, its applies) so that a failed re-apply
// does not make Cluster API think the infrastructure is gone.
func ReadyInputs(provisioned, followsApplies bool) []string {
	if provisioned {
		if followsApplies {
			return []string{infrav1.InfrastructureHealthyCondition, infrav1.ApplyJobSucceededCondition, infrav1.DeletingCondition}
		}
		return []string{infrav1.InfrastructureHealthyCondition, infrav1.DeletingCondition}
	}
	return []string{infrav1.DependenciesReadyCondition, infrav1.IdentityAllowedCondition, infrav1.CredentialsMirroredCondition,
		infrav1.RunnerRBACReadyCondition, infrav1.ApplyJobSucceededCondition, infrav1.StateReadableCondition,
		infrav1.OutputsValidCondition, infrav1.InfrastructureHealthyCondition, infrav1.DeletingCondition}
}

// Ready summarises the conditions of types: False when one is bad,
// Unknown when one is unknown or missing, else True. Deleting counts
// inverted and is ignored while missing.
func Ready(conds []metav1.Condition, types []string) metav1.Condition {
	var bad, unknown []string
	for _, t := range types {
		c := meta.FindStatusCondition(conds, t)
		switch {
		case c == nil && t == infrav1.DeletingCondition:
		case c == nil:
			unknown = append(unknown, t)
		case t == infrav1.DeletingCondition && c.Status == metav1.ConditionTrue:
			bad = append(bad, t)
		case t == infrav1.DeletingCondition:
		case c.Status == metav1.ConditionFalse:
			bad = append(bad, fmt.Sprintf("%s (%s)", t, c.Reason))
		case c.Status == metav1.ConditionUnknown:
			unknown = append(unknown, fmt.Sprintf("%s (%s)", t, c.Reason))
		}
	}
	switch {
	case len(bad) > 0:
		return metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionFalse, Reason: infrav1.NotReadyReason,
			Message: "Not ready: " + strings.Join(bad, ", ")}
	case len(unknown) > 0:
		return metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionUnknown, Reason: infrav1.ReadyUnknownReason,
			Message: "Waiting for: " + strings.Join(unknown, ", ")}
	}
	return metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.ReadyReason, Message: "Ready"}
}

// Fact is what c says: its type, status, reason and message, without the
// generation and time a status gives it.
func Fact(c metav1.Condition) metav1.Condition {
	return metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
}

// FirstRecord is what an operation condition of type t that was never set
// says: its first visit's value, or a condition of no Status for a
// RestoreJobSucceeded, which only a restore request brings (it goes
// again).
func FirstRecord(t string) metav1.Condition {
	if t == infrav1.ApplyJobSucceededCondition {
		return NoApplyYet
	}
	if c := meta.FindStatusCondition(FirstVisit(false), t); c != nil {
		return *c
	}
	return metav1.Condition{Type: t}
}
