package conditions

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

func cond(t string, s metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason}
}

func TestReady(t *testing.T) {
	types := []string{infrav1.ApplyJobSucceededCondition, infrav1.InfrastructureHealthyCondition, infrav1.DeletingCondition}
	testCases := []struct {
		name   string
		conds  []metav1.Condition
		want   metav1.ConditionStatus
		reason string
		names  string
	}{
		{"all true, Deleting false", []metav1.Condition{cond(types[0], "True", "ApplySucceeded"), cond(types[1], "True", "Healthy"), cond(types[2], "False", "NotDeleting")},
			metav1.ConditionTrue, infrav1.ReadyReason, ""},
		{"a missing Deleting is ignored", []metav1.Condition{cond(types[0], "True", "a"), cond(types[1], "True", "b")}, metav1.ConditionTrue, infrav1.ReadyReason, ""},
		{"a missing condition is unknown", []metav1.Condition{cond(types[0], "True", "a")}, metav1.ConditionUnknown, infrav1.ReadyUnknownReason, types[1]},
		{"unknown", []metav1.Condition{cond(types[0], "Unknown", "NoApplyYet"), cond(types[1], "True", "b")}, metav1.ConditionUnknown, infrav1.ReadyUnknownReason, "NoApplyYet"},
		{"false beats unknown", []metav1.Condition{cond(types[0], "False", "ApplyFailed"), cond(types[1], "Unknown", "HealthUnknown")},
			metav1.ConditionFalse, infrav1.NotReadyReason, "ApplyFailed"},
		{"deleting is not ready", []metav1.Condition{cond(types[0], "True", "a"), cond(types[1], "True", "b"), cond(types[2], "True", "Deleting")},
			metav1.ConditionFalse, infrav1.NotReadyReason, infrav1.DeletingCondition},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Ready(tc.conds, types)
			if got.Status != tc.want || got.Reason != tc.reason || !strings.Contains(got.Message, tc.names) {
				t.Errorf("Ready = %+v, want %s/%s naming %q", got, tc.want, tc.reason, tc.names)
			}
		})
	}
}

// TestReadyInputs: before it is provisioned an object's Ready waits for
// every step; after, a failed re-apply does not make it unready, except
// for a kind whose Ready follows its applies (a pool).
func TestReadyInputs(t *testing.T) {
	failedApply := []metav1.Condition{
		cond(infrav1.DependenciesReadyCondition, "True", "a"), cond(infrav1.IdentityAllowedCondition, "True", "a"),
		cond(infrav1.CredentialsMirroredCondition, "True", "a"), cond(infrav1.RunnerRBACReadyCondition, "True", "a"),
		cond(infrav1.ApplyJobSucceededCondition, "False", infrav1.ApplyFailedReason), cond(infrav1.StateReadableCondition, "True", "a"),
		cond(infrav1.OutputsValidCondition, "True", "a"), cond(infrav1.InfrastructureHealthyCondition, "True", "a"),
	}
	testCases := []struct {
		name                        string
		provisioned, followsApplies bool
		want                        metav1.ConditionStatus
	}{
		{"not provisioned: a failed apply is not ready", false, false, metav1.ConditionFalse},
		{"provisioned: health alone decides", true, false, metav1.ConditionTrue},
		{"provisioned, Ready follows the applies", true, true, metav1.ConditionFalse},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Ready(failedApply, ReadyInputs(tc.provisioned, tc.followsApplies)); got.Status != tc.want {
				t.Errorf("Ready = %+v, want %s", got, tc.want)
			}
			deleting := append(failedApply, cond(infrav1.DeletingCondition, "True", infrav1.DeletingReason))
			if got := Ready(deleting, ReadyInputs(tc.provisioned, tc.followsApplies)); got.Status != metav1.ConditionFalse {
				t.Errorf("Ready of a deleting object = %+v, want False", got)
			}
		})
	}
}

func TestLifecycle(t *testing.T) {
	testCases := []struct {
		deleting, paused bool
		deletingWant     string // Deleting's reason, then its message
		message          string
		pausedWant       string
	}{
		{false, false, infrav1.NotDeletingReason, "", infrav1.NotPausedReason},
		{false, true, infrav1.NotDeletingReason, "", infrav1.PausedReason},
		{true, false, infrav1.DeletingReason, "The object is being deleted", infrav1.NotPausedReason},
		{true, true, infrav1.DeletingReason, "The object is being deleted; deletion waits until it is unpaused", infrav1.PausedReason},
	}
	for _, tc := range testCases {
		conds := Lifecycle(tc.deleting, tc.paused)
		del, pause := meta.FindStatusCondition(conds, infrav1.DeletingCondition), meta.FindStatusCondition(conds, infrav1.PausedCondition)
		if del == nil || del.Reason != tc.deletingWant || (del.Status == metav1.ConditionTrue) != tc.deleting || del.Message != tc.message {
			t.Errorf("deleting %v, paused %v: Deleting = %+v, want %s saying %q", tc.deleting, tc.paused, del, tc.deletingWant, tc.message)
		}
		pausedSays := ""
		if tc.paused {
			pausedSays = "The object or its Cluster is paused: no Job starts"
		}
		if pause == nil || pause.Reason != tc.pausedWant || (pause.Status == metav1.ConditionTrue) != tc.paused || pause.Message != pausedSays {
			t.Errorf("paused %v: Paused = %+v, want %s saying %q", tc.paused, pause, tc.pausedWant, pausedSays)
		}
	}
}

// TestOperationConditions: each operation's Jobs report on one condition,
// with one failure reason.
func TestOperationConditions(t *testing.T) {
	testCases := []struct {
		op           decide.Operation
		typ, failure string
	}{
		{decide.OpApply, infrav1.ApplyJobSucceededCondition, infrav1.ApplyFailedReason},
		{decide.OpPlan, infrav1.ApplyJobSucceededCondition, infrav1.ApplyFailedReason},
		{decide.OpDestroy, infrav1.ApplyJobSucceededCondition, infrav1.DestroyFailedReason},
		{decide.OpRefresh, infrav1.DriftJobSucceededCondition, infrav1.DriftJobFailedReason},
		{decide.OpDrift, infrav1.DriftJobSucceededCondition, infrav1.DriftJobFailedReason},
		{decide.OpRestore, infrav1.RestoreJobSucceededCondition, infrav1.RestoreFailedReason},
	}
	for _, tc := range testCases {
		if got := OpType(tc.op); got != tc.typ {
			t.Errorf("%s reports on %s, want %s", tc.op, got, tc.typ)
		}
		if got := FailReason(tc.op); got != tc.failure {
			t.Errorf("a failed %s reports %s, want %s", tc.op, got, tc.failure)
		}
	}
}

// TestInputsApplied: one row per documented reason, and the passes that
// leave the condition as it was.
func TestInputsApplied(t *testing.T) {
	upToDate := decide.Decision{Action: decide.ActionWait, Reason: decide.ReasonUpToDate}
	testCases := []struct {
		name   string
		facts  InputsFacts
		d      decide.Decision
		status metav1.ConditionStatus
		reason string // "" when the pass leaves it alone
		says   string
	}{
		{"a deleting object leaves it", InputsFacts{Deleting: true, StateObserved: true, InputsBuilt: true}, upToDate, "", "", ""},
		{"a running check leaves it", InputsFacts{JobRunning: true, ActiveOp: decide.OpDrift, ActiveJob: "d", StateObserved: true, InputsBuilt: true}, upToDate, "", "", ""},
		{"a running Job of no known operation leaves it", InputsFacts{JobRunning: true, ActiveJob: "d", StateObserved: true, InputsBuilt: true}, upToDate, "", "", ""},
		{"a pass that read no state leaves it", InputsFacts{InputsBuilt: true}, upToDate, "", "", ""},
		{"a machine whose inputs no longer build, applied", InputsFacts{StateObserved: true, InState: true}, upToDate, metav1.ConditionTrue, infrav1.InputsAppliedReason,
			"a machine never re-applies"},
		{"inputs that do not build", InputsFacts{StateObserved: true}, upToDate, metav1.ConditionUnknown, infrav1.InputsUnavailableReason, "cannot be built"},
		{"an apply runs", InputsFacts{JobRunning: true, ActiveOp: decide.OpApply, ActiveJob: "captf-c-demo-apply", InputsBuilt: true, InState: true}, upToDate,
			metav1.ConditionFalse, infrav1.ApplyRunningReason, "Job captf-c-demo-apply applies"},
		{"a pool's exports change is held, though its last inputs are applied", InputsFacts{StateObserved: true, InputsBuilt: true, InState: true, HeldPlan: "tfmp-pool-0abc"}, upToDate,
			metav1.ConditionFalse, infrav1.AwaitingApprovalReason, "approval of TerraformPlan tfmp-pool-0abc"},
		{"applied", InputsFacts{StateObserved: true, InputsBuilt: true, InState: true}, upToDate, metav1.ConditionTrue, infrav1.InputsAppliedReason, "current inputs are applied"},
		{"a destructive change waits for approval", InputsFacts{StateObserved: true, InputsBuilt: true},
			decide.Decision{Action: decide.ActionWait, Reason: decide.ReasonAwaitingApproval}, metav1.ConditionFalse, infrav1.AwaitingApprovalReason, "wait for approval"},
		{"a Manual plan waits for approval", InputsFacts{StateObserved: true, InputsBuilt: true},
			decide.Decision{Action: decide.ActionWait, Reason: decide.ReasonPlanAwaitingApproval}, metav1.ConditionFalse, infrav1.AwaitingApprovalReason, "wait for approval"},
		{"a failed apply backs off", InputsFacts{StateObserved: true, InputsBuilt: true},
			decide.Decision{Action: decide.ActionWait, Reason: decide.Backoff(decide.ReasonInputsChanged)}, metav1.ConditionFalse, infrav1.InputsApplyFailedReason, "retried after a backoff"},
		{"an apply is due", InputsFacts{StateObserved: true, InputsBuilt: true},
			decide.Decision{Action: decide.ActionStartJob, Op: decide.OpApply, Reason: decide.ReasonInputsChanged}, metav1.ConditionFalse, infrav1.ApplyPendingReason, "is due"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := InputsApplied(tc.facts, tc.d)
			if tc.reason == "" {
				if ok {
					t.Fatalf("InputsApplied = %+v, want it left alone", c)
				}
				return
			}
			if !ok || c.Type != infrav1.InputsAppliedCondition || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.says) {
				t.Fatalf("InputsApplied = %+v (set %v), want %s/%s saying %q", c, ok, tc.status, tc.reason, tc.says)
			}
		})
	}
}

// TestFirstRecord: a live report over a condition never set covers what
// the condition says on a first visit; a restore's, which a first visit
// does not set, covers a condition of no status.
func TestFirstRecord(t *testing.T) {
	if c := FirstRecord(infrav1.ApplyJobSucceededCondition); c.Reason != NoApplyYet.Reason || c.Status != NoApplyYet.Status {
		t.Errorf("ApplyJobSucceeded's first record = %+v, want NoApplyYet", c)
	}
	for _, want := range FirstVisit(false) {
		if want.Type == infrav1.ApplyJobSucceededCondition {
			continue
		}
		if c := FirstRecord(want.Type); c != want {
			t.Errorf("%s's first record = %+v, want its first visit's %+v", want.Type, c, want)
		}
	}
	if c := FirstRecord(infrav1.RestoreJobSucceededCondition); c != (metav1.Condition{Type: infrav1.RestoreJobSucceededCondition}) {
		t.Errorf("RestoreJobSucceeded's first record = %+v, want no status", c)
	}
}
