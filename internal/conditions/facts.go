package conditions

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// DependenciesMet is DependenciesReady once the current inputs built.
var DependenciesMet = metav1.Condition{Type: infrav1.DependenciesReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.DependenciesReadyReason,
	Message: "Everything the inputs need is there"}

// DependenciesRendered is DependenciesReady of a provisioned machine,
// whose inputs were rendered once and are not built again: a True it
// said (current) stays as it was said; an owner problem it reported
// since is over.
func DependenciesRendered(current *metav1.Condition) metav1.Condition {
	if current != nil && current.Type == infrav1.DependenciesReadyCondition && current.Status == metav1.ConditionTrue {
		return *current
	}
	return metav1.Condition{Type: infrav1.DependenciesReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.DependenciesReadyReason,
		Message: "Its owners are there; its inputs were rendered when it was provisioned"}
}

// InputsProblem is why the current inputs cannot be built, as far as the
// object's configuration (or something it waits for) is the cause.
type InputsProblem int

// The problems InputsUnavailable reports.
const (
	// SourceNotFound: a variablesFrom source does not exist.
	SourceNotFound InputsProblem = iota
	// VariablesInvalid: a variable, or a value for it, is not valid.
	VariablesInvalid
	// WaitingForExports: a value from the cluster's exports is not there
	// yet.
	WaitingForExports
	// WaitingForBootstrap: the bootstrap data is not there, or not in its
	// format, yet.
	WaitingForBootstrap
)

// InputsUnavailable is DependenciesReady when the inputs cannot be built
// for problem, msg saying why: False when only a change of the object's
// configuration fixes it, Unknown while it waits for something to come.
func InputsUnavailable(problem InputsProblem, msg string) metav1.Condition {
	c := metav1.Condition{Type: infrav1.DependenciesReadyCondition, Status: metav1.ConditionFalse, Message: msg}
	switch problem {
	case SourceNotFound:
		c.Reason = infrav1.VariablesSourceNotFoundReason
	case WaitingForExports:
		c.Status, c.Reason = metav1.ConditionUnknown, infrav1.WaitingForClusterExportsReason
	case WaitingForBootstrap:
		c.Status, c.Reason = metav1.ConditionUnknown, infrav1.WaitingForBootstrapDataReason
	default:
		c.Reason = infrav1.VariablesInvalidReason
	}
	return c
}

// ExportsHeld is a pool's ApplyJobSucceeded while a change of the
// cluster's exports waits for the approval of a destructive plan,
// blocked saying which plan and how to approve it.
func ExportsHeld(blocked string) metav1.Condition {
	return metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionFalse, Reason: infrav1.DestructivePlanBlockedReason,
		Message: blocked + "; meanwhile the pool keeps the cluster exports of its last successful apply (bootstrap data rotations still apply)"}
}

// RestoreBackupNotFound is RestoreJobSucceeded when the restore request
// names no backup there is, msg saying which and what to do.
func RestoreBackupNotFound(msg string) metav1.Condition {
	return metav1.Condition{Type: infrav1.RestoreJobSucceededCondition, Status: metav1.ConditionFalse, Reason: infrav1.RestoreBackupNotFoundReason, Message: msg}
}

// AppliedBefore is ApplyJobSucceeded saying again what the last real
// apply, j, did, with what happened since.
func AppliedBefore(j decide.FinishedJob, since string) metav1.Condition {
	if !j.Succeeded {
		return metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionFalse, Reason: infrav1.ApplyFailedReason,
			Message: fmt.Sprintf("The last apply, Job %s, failed; %s", j.Name, since)}
	}
	return metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason,
		Message: fmt.Sprintf("Job %s applied the current inputs; %s", j.Name, since)}
}

// AppliedInState is ApplyJobSucceeded where no Job of the object is kept
// (moved, or its Jobs deleted) and the state, at serial, holds an apply
// of the current inputs.
func AppliedInState(serial int64) metav1.Condition {
	return metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason,
		Message: fmt.Sprintf("State serial %d holds an apply of the current inputs; no Job of it is kept here (moved, or its Jobs were deleted)", serial)}
}

// providerIDGone starts the message of a machine treated as terminated
// because its provider_id stayed null.
const providerIDGone = "The module reported a null provider_id in two consecutive readings"

// ProviderIDHealth is InfrastructureHealthy of a machine whose module
// reports a null provider_id although the machine has one, judged over
// two readings: the first is Unknown ProviderIDMissing (nothing else
// changes, spec.providerID is kept), the second in a row treats the
// instance as terminated. prev is the condition as the object shows it;
// a pass over the same reading (not newReading) keeps the verdict.
func ProviderIDHealth(prev *metav1.Condition, newReading bool) metav1.Condition {
	missing := prev != nil && prev.Reason == infrav1.ProviderIDMissingReason
	terminated := prev != nil && prev.Reason == infrav1.InstanceTerminatedReason && strings.HasPrefix(prev.Message, providerIDGone)
	switch {
	case !newReading && (missing || terminated):
		return Fact(*prev)
	case missing || terminated:
		return metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionFalse, Reason: infrav1.InstanceTerminatedReason,
			Message: providerIDGone + ": the instance is treated as terminated (spec.providerID is kept)"}
	}
	return metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionUnknown, Reason: infrav1.ProviderIDMissingReason,
		Message: "The module reported a null provider_id although the machine has one; if the next reading is null too, the instance is treated as terminated"}
}
