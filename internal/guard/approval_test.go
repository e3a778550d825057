package guard

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// phased is a plan named name in phase ph.
func phased(name string, ph infrav1.PlanPhase) infrav1.TerraformPlan {
	return infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{infrav1.PlanPhaseLabel: string(ph)}}}
}

// TestStillAwaited: the wait for an approval is said again while a plan
// waits for one (Pending), and only while the condition says a change
// waits.
func TestStillAwaited(t *testing.T) {
	blocked := &metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Reason: infrav1.DestructivePlanBlockedReason}
	awaiting := &metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Reason: infrav1.PlanAwaitingApprovalReason}
	applied := &metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Reason: infrav1.ApplySucceededReason}
	pending := []infrav1.TerraformPlan{phased("old", infrav1.PlanPhaseSuperseded), phased("new", infrav1.PlanPhasePending)}
	approved := []infrav1.TerraformPlan{phased("new", infrav1.PlanPhaseApproved)}
	testCases := []struct {
		name  string
		c     *metav1.Condition
		plans []infrav1.TerraformPlan
		want  bool
	}{
		{"blocked, a plan pending", blocked, pending, true},
		{"awaiting approval, a plan pending", awaiting, pending, true},
		{"blocked, the plan approved", blocked, approved, false},
		{"blocked, no plan", blocked, nil, false},
		{"applied, a plan pending", applied, pending, false},
		{"no condition", nil, pending, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := StillAwaited(tc.c, tc.plans); got != tc.want {
				t.Errorf("StillAwaited = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestWithdrawn: a withdrawn change reports the last real apply again,
// naming the Job stopped before the change and its plan (or that it was
// deleted); without a real apply the condition stays.
func TestWithdrawn(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	applied := decide.FinishedJob{Name: "c-apply-a1", Op: decide.OpApply, FinishedAt: at, Succeeded: true}
	failed := decide.FinishedJob{Name: "c-apply-a1", Op: decide.OpApply, FinishedAt: at}
	blocked := decide.FinishedJob{Name: "c-apply-a2", Op: decide.OpApply, FinishedAt: at.Add(time.Minute), Blocked: true}
	superseded := []infrav1.TerraformPlan{phased("tfp-c-1", infrav1.PlanPhaseSuperseded)}
	testCases := []struct {
		name    string
		plans   []infrav1.TerraformPlan
		history []decide.FinishedJob
		ok      bool
		status  metav1.ConditionStatus
		says    []string
	}{
		{"the blocked Job's plan superseded", superseded, []decide.FinishedJob{applied, blocked}, true, metav1.ConditionTrue,
			[]string{"Job c-apply-a1 applied", "the change Job c-apply-a2 stopped before (TerraformPlan tfp-c-1) was withdrawn"}},
		{"a newer plan pending, the superseded one named", []infrav1.TerraformPlan{phased("tfp-c-2", infrav1.PlanPhasePending), phased("tfp-c-1", infrav1.PlanPhaseSuperseded), phased("tfp-c-0", infrav1.PlanPhaseSuperseded)},
			[]decide.FinishedJob{applied, blocked}, true, metav1.ConditionTrue, []string{"(TerraformPlan tfp-c-1) was withdrawn"}},
		{"its plan deleted", nil, []decide.FinishedJob{applied, blocked}, true, metav1.ConditionTrue,
			[]string{"the change Job c-apply-a2 stopped before (its plan was deleted) was withdrawn"}},
		{"a Manual plan withdrawn, no Job stopped", superseded, []decide.FinishedJob{applied}, true, metav1.ConditionTrue,
			[]string{"the change planned (TerraformPlan tfp-c-1) was withdrawn"}},
		{"the last real apply failed", superseded, []decide.FinishedJob{failed, blocked}, true, metav1.ConditionFalse,
			[]string{"The last apply, Job c-apply-a1, failed"}},
		{"no real apply", superseded, []decide.FinishedJob{blocked}, false, "", nil},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := Withdrawn(tc.plans, tc.history)
			if ok != tc.ok || c.Status != tc.status {
				t.Fatalf("Withdrawn = %+v, %t; want ok %t, status %q", c, ok, tc.ok, tc.status)
			}
			for _, s := range tc.says {
				if !strings.Contains(c.Message, s) {
					t.Errorf("the message %q does not say %q", c.Message, s)
				}
			}
		})
	}
}
