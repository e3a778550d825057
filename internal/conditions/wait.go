package conditions

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// WaitFacts are what the conditions of a wait say, gathered by the engine
// from what the pass read.
type WaitFacts struct {
	// Message is the wait's own prose (which record is missing, which plan
	// waits, ...).
	Message string
	// InsecurePolicy says how the effective jobs policy weakens a Job's
	// isolation; InvalidPolicy why it does not validate (nil: it does).
	InsecurePolicy, InvalidPolicy error
	// ApplyReason is ApplyJobSucceeded's reason as the object shows it.
	ApplyReason string
	// TooLarge says why the current inputs exceed the cap (nil: they do
	// not).
	TooLarge error
}

// Wait is what a decision to wait reports, on the condition it concerns.
// The waits whose cause another condition already reports add nothing:
// StateLost, StateUnreadable, DeletionHeld and ApplyOutcomeUnknown
// (StateReadable says why), OwnerMismatch and InputsUnavailable
// (DependenciesReady), CredentialsNotReady (the credentials step's
// conditions), DependentsExist (DeletionBlocked, which the count of the
// dependents says on every pass that makes it). Inputs over the cap are
// reported whatever else waits, last, so that they have
// ApplyJobSucceeded's last word. The waits a Job's start
// meets (decide.Stopped: a recorded identity, a new image's runtime, a Job
// slot, the run lease, the cluster gate, a refused Job) are reported on
// the operation's condition, with the engine's message. Which of
// these reports are live (end when no pass reports them again) is the
// rule of internal/livereport (Live).
func Wait(d decide.Decision, f WaitFacts) []metav1.Condition {
	var out []metav1.Condition
	report := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		out = append(out, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg})
	}
	switch d.Reason {
	case decide.ReasonDurableInputsMissing:
		if d.Op == decide.OpDestroy {
			report(OpType(d.Op), metav1.ConditionFalse, infrav1.DestroyFailedReason, f.Message)
		} else {
			report(OpType(d.Op), metav1.ConditionUnknown, infrav1.DurableInputsMissingReason, f.Message)
		}
	case decide.ReasonJobPolicyInvalid:
		// No Job of any operation runs with a policy that weakens its
		// isolation, whatever admission let through: reported on
		// ApplyJobSucceeded, which feeds Ready, for every operation. A
		// destroy or a restore runs with a policy that merely does not
		// validate.
		err := f.InsecurePolicy
		if f.InvalidPolicy != nil && d.Op != decide.OpDestroy && d.Op != decide.OpRestore {
			err = f.InvalidPolicy
		}
		if err != nil {
			report(infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.JobPolicyInvalidReason, err.Error())
		}
	case decide.ReasonNamespaceTerminating:
		report(OpType(d.Op), metav1.ConditionFalse, infrav1.NamespaceTerminatingReason, f.Message)
	case decide.ReasonDeletionPolicyUnresolved:
		report(infrav1.DeletingCondition, metav1.ConditionTrue, infrav1.DeletionPolicyUnresolvedReason,
			"The object sets no deletionPolicy and its TerraformCluster cannot be found to inherit one: it is neither destroyed nor retained; set spec.deletionPolicy")
	case decide.ReasonPlanAwaitingApproval:
		if f.ApplyReason != infrav1.PlanChangedReason { // the approved plan just changed: that is the news
			report(infrav1.ApplyJobSucceededCondition, metav1.ConditionUnknown, infrav1.PlanAwaitingApprovalReason, f.Message)
		}
	case decide.ReasonStateRescued:
		report(infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.ApplyFailedReason, f.Message)
	case decide.ReasonAwaitingApproval:
		report(infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.DestructivePlanBlockedReason, f.Message)
	case decide.ReasonJobRefused:
		report(OpType(d.Op), metav1.ConditionFalse, FailReason(d.Op), f.Message)
	default:
		if r, ok := startWaits[d.Reason]; ok {
			report(OpType(d.Op), r.status, r.reason, f.Message)
		}
	}
	if f.TooLarge != nil {
		report(infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.InputsTooLargeReason, f.TooLarge.Error())
	}
	return out
}

// startWaits are what the waits a Job's start meets (decide.Stopped)
// report on the operation's condition: False when only a change fixes
// it, Unknown while it frees by itself.
var startWaits = map[decide.Reason]struct {
	status metav1.ConditionStatus
	reason string
}{
	decide.ReasonIdentityNotAllowed:         {metav1.ConditionFalse, infrav1.IdentityNotAllowedReason},
	decide.ReasonRuntimeCannotKeepState:     {metav1.ConditionFalse, infrav1.RuntimeCannotKeepStateReason},
	decide.ReasonRuntimeNotKnown:            {metav1.ConditionUnknown, infrav1.RuntimeCannotKeepStateReason},
	decide.ReasonWaitingForRunLease:         {metav1.ConditionUnknown, infrav1.WaitingForRunLeaseReason},
	decide.ReasonWaitingForJobSlot:          {metav1.ConditionUnknown, infrav1.WaitingForJobSlotReason},
	decide.ReasonWaitingForClusterOperation: {metav1.ConditionUnknown, infrav1.WaitingForClusterOperationReason},
	decide.ReasonWaitingForMachineOps:       {metav1.ConditionUnknown, infrav1.WaitingForMachineOperationsReason},
}

// DurableInputsMissingMessage is the prose of a wait whose operation op cannot be
// rendered: the durable inputs Secret record is missing.
func DurableInputsMissingMessage(record string, op decide.Operation) string {
	return fmt.Sprintf("The durable inputs Secret %s is missing, so %s cannot be rendered; see <https://captf.io/docs/operator-guide/runbooks/stuck-destroy.html>",
		record, op)
}

// NamespaceTerminatingMessage is the prose of the Job of op that cannot run in
// namespace, being deleted, and the way out: the state Secret and the
// records are kept by finalizer. evacuation: the manager may run the
// destroy in an evacuation namespace (not with --namespace).
func NamespaceTerminatingMessage(namespace, stateSecret, finalizer string, op decide.Operation, evacuation bool) string {
	elsewhere := ""
	if !evacuation {
		elsewhere = " (this manager watches one namespace, --namespace, so it runs no destroy in an evacuation namespace)"
	}
	return fmt.Sprintf("Namespace %s is being deleted and Kubernetes refuses new Jobs in it, so the %s cannot run%s. "+
		"The state %s and the inputs records are kept, readable, by the finalizer %s: pause this object, run the destroy by hand "+
		"(see the stuck-destroy runbook), then set spec.deletionPolicy: Retain and unpause; the kept Secrets then wait for you to remove that finalizer",
		namespace, op, elsewhere, stateSecret, finalizer)
}

// StateRescuedMessage is the prose of the wait after an apply whose state the
// backend rejected was rescued as backup serial: why no apply runs, and
// the way out.
func StateRescuedMessage(serial string) string {
	return fmt.Sprintf("The backend rejected the state the last apply wrote; it was saved as state backup serial %s. No apply or destroy runs until it is restored: "+
		"if OpenTofu wrote it, switch spec.source.image to a Terraform image, then set %s=%s (see the size-limits runbook)", serial, infrav1.RestoreStateAnnotation, serial)
}
