package conditions

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// TestWait: each wait that reports a condition of its own, one row each;
// the waits whose cause another condition already reports report nothing.
func TestWait(t *testing.T) {
	insecure, invalid := errors.New("runAsNonRoot may not be false"), errors.New("activeDeadlineSeconds must be positive")
	wait := func(r decide.Reason, op decide.Operation) decide.Decision {
		return decide.Decision{Action: decide.ActionWait, Op: op, Reason: r}
	}
	type want struct {
		typ    string
		status metav1.ConditionStatus
		reason string
		msg    string
	}
	testCases := []struct {
		name  string
		d     decide.Decision
		facts WaitFacts
		want  []want
	}{
		{"a destroy without durable inputs fails", wait(decide.ReasonDurableInputsMissing, decide.OpDestroy), WaitFacts{Message: "no record"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.DestroyFailedReason, "no record"}}},
		{"a drift check without durable inputs waits", wait(decide.ReasonDurableInputsMissing, decide.OpDrift), WaitFacts{Message: "no record"},
			[]want{{infrav1.DriftJobSucceededCondition, metav1.ConditionUnknown, infrav1.DurableInputsMissingReason, "no record"}}},
		{"an insecure policy holds every operation", wait(decide.ReasonJobPolicyInvalid, decide.OpDestroy), WaitFacts{InsecurePolicy: insecure, InvalidPolicy: invalid},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.JobPolicyInvalidReason, insecure.Error()}}},
		{"an invalid policy holds an apply", wait(decide.ReasonJobPolicyInvalid, decide.OpApply), WaitFacts{InsecurePolicy: insecure, InvalidPolicy: invalid},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.JobPolicyInvalidReason, invalid.Error()}}},
		{"a policy that is only invalid lets a restore be", wait(decide.ReasonJobPolicyInvalid, decide.OpRestore), WaitFacts{InvalidPolicy: invalid}, nil},
		{"a terminating namespace", wait(decide.ReasonNamespaceTerminating, decide.OpDestroy), WaitFacts{Message: "namespace going"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.NamespaceTerminatingReason, "namespace going"}}},
		{"no deletion policy to inherit", wait(decide.ReasonDeletionPolicyUnresolved, ""), WaitFacts{},
			[]want{{infrav1.DeletingCondition, metav1.ConditionTrue, infrav1.DeletionPolicyUnresolvedReason, ""}}},
		{"a Manual plan waits for approval", wait(decide.ReasonPlanAwaitingApproval, decide.OpApply), WaitFacts{Message: "approve it"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionUnknown, infrav1.PlanAwaitingApprovalReason, "approve it"}}},
		{"an approved plan that changed stays the news", wait(decide.ReasonPlanAwaitingApproval, decide.OpApply),
			WaitFacts{Message: "approve it", ApplyReason: infrav1.PlanChangedReason}, nil},
		{"a rescued state waits for its restore", wait(decide.ReasonStateRescued, decide.OpApply), WaitFacts{Message: "restore it"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.ApplyFailedReason, "restore it"}}},
		{"a destructive plan is blocked", wait(decide.ReasonAwaitingApproval, decide.OpApply), WaitFacts{Message: "approve it"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.DestructivePlanBlockedReason, "approve it"}}},
		{"dependents hold a cluster's deletion: the count says it, the wait adds nothing", wait(decide.ReasonDependentsExist, ""), WaitFacts{}, nil},
		{"a lost state: StateReadable says why", wait(decide.ReasonStateLost, decide.OpApply), WaitFacts{}, nil},
		{"an unreadable state: StateReadable says why", wait(decide.ReasonStateUnreadable, decide.OpApply), WaitFacts{}, nil},
		{"a held deletion: StateReadable says why", wait(decide.ReasonDeletionHeld, decide.OpDestroy), WaitFacts{}, nil},
		{"an unknown apply outcome: StateReadable says why", wait(decide.ReasonApplyOutcomeUnknown, decide.OpApply), WaitFacts{}, nil},
		{"inputs that do not build: DependenciesReady says why", wait(decide.ReasonInputsUnavailable, decide.OpApply), WaitFacts{}, nil},
		{"an owner mismatch: DependenciesReady says why", wait(decide.ReasonOwnerMismatch, decide.OpApply), WaitFacts{}, nil},
		{"credentials: their own conditions say why", wait(decide.ReasonCredentialsNotReady, decide.OpApply), WaitFacts{}, nil},
		{"a recorded identity that does not allow the Job", wait(decide.ReasonIdentityNotAllowed, decide.OpDestroy), WaitFacts{Message: "not allowed"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.IdentityNotAllowedReason, "not allowed"}}},
		{"a runtime that cannot keep the state", wait(decide.ReasonRuntimeCannotKeepState, decide.OpDrift), WaitFacts{Message: "tofu cannot read it"},
			[]want{{infrav1.DriftJobSucceededCondition, metav1.ConditionFalse, infrav1.RuntimeCannotKeepStateReason, "tofu cannot read it"}}},
		{"a runtime not known yet", wait(decide.ReasonRuntimeNotKnown, decide.OpApply), WaitFacts{Message: "inspecting"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionUnknown, infrav1.RuntimeCannotKeepStateReason, "inspecting"}}},
		{"a busy run lease", wait(decide.ReasonWaitingForRunLease, decide.OpRestore), WaitFacts{Message: "held by Job x"},
			[]want{{infrav1.RestoreJobSucceededCondition, metav1.ConditionUnknown, infrav1.WaitingForRunLeaseReason, "held by Job x"}}},
		{"no Job slot", wait(decide.ReasonWaitingForJobSlot, decide.OpApply), WaitFacts{Message: "4 of 4"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionUnknown, infrav1.WaitingForJobSlotReason, "4 of 4"}}},
		{"the cluster's operation runs", wait(decide.ReasonWaitingForClusterOperation, decide.OpApply), WaitFacts{Message: "Job c"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionUnknown, infrav1.WaitingForClusterOperationReason, "Job c"}}},
		{"the machines' operations run", wait(decide.ReasonWaitingForMachineOps, decide.OpApply), WaitFacts{Message: "2 machines"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionUnknown, infrav1.WaitingForMachineOperationsReason, "2 machines"}}},
		{"a Job the API server refuses fails its operation", wait(decide.ReasonJobRefused, decide.OpDestroy), WaitFacts{Message: "invalid"},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.DestroyFailedReason, "invalid"}}},
		{"inputs over the cap, whatever waits", wait(decide.ReasonOwnerMismatch, decide.OpApply), WaitFacts{TooLarge: errors.New("inputs are 2 MiB")},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.InputsTooLargeReason, "inputs are 2 MiB"}}},
		{"inputs over the cap have the last word on ApplyJobSucceeded", wait(decide.ReasonAwaitingApproval, decide.OpApply),
			WaitFacts{Message: "approve it", TooLarge: errors.New("inputs are 2 MiB")},
			[]want{{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.DestructivePlanBlockedReason, "approve it"},
				{infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.InputsTooLargeReason, "inputs are 2 MiB"}}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Wait(tc.d, tc.facts)
			if len(got) != len(tc.want) {
				t.Fatalf("Wait = %+v, want %d conditions", got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Type != w.typ || g.Status != w.status || g.Reason != w.reason || (w.msg != "" && g.Message != w.msg) || g.Message == "" {
					t.Errorf("Wait[%d] = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
