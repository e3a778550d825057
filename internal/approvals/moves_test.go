package approvals

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// TestMove: where a plan moves before the decision, each rule a row.
func TestMove(t *testing.T) {
	const moot = "the inputs no longer hash to h3:1"
	newest := MoveFacts{Newest: true}
	with := func(f MoveFacts, change func(*MoveFacts)) MoveFacts { change(&f); return f }
	testCases := []struct {
		name          string
		pl            infrav1.TerraformPlan
		f             MoveFacts
		wantTo        infrav1.PlanPhase
		wantSupersede string
	}{
		{"a pending plan that stands stays", plan("p", infrav1.PlanPhasePending, false), newest, "", ""},
		{"an approval is recorded", plan("p", infrav1.PlanPhasePending, true), newest, infrav1.PlanPhaseApproved, ""},
		{"an approved plan stays approved", plan("p", infrav1.PlanPhaseApproved, true), newest, "", ""},
		{"a plan another writer made is phased Pending", plan("p", "", false), newest, infrav1.PlanPhasePending, ""},
		{"an applied plan ends", plan("p", infrav1.PlanPhaseApproved, true),
			with(newest, func(f *MoveFacts) { f.Outcome = infrav1.PlanPhaseApplied }), infrav1.PlanPhaseApplied, ""},
		{"a plan whose apply found it changed fails", plan("p", infrav1.PlanPhaseApproved, true),
			with(newest, func(f *MoveFacts) { f.Outcome, f.Moot = infrav1.PlanPhaseFailed, moot }), infrav1.PlanPhaseFailed, ""},
		{"an older live plan is superseded", plan("p", infrav1.PlanPhasePending, false), MoveFacts{}, infrav1.PlanPhaseSuperseded, "a newer plan replaced it"},
		{"even approved", plan("p", infrav1.PlanPhaseApproved, true), MoveFacts{}, infrav1.PlanPhaseSuperseded, "a newer plan replaced it"},
		{"a moot plan is superseded, saying why", plan("p", infrav1.PlanPhasePending, true),
			with(newest, func(f *MoveFacts) { f.Moot = moot }), infrav1.PlanPhaseSuperseded, moot},
		{"a frozen pass records an approval", plan("p", infrav1.PlanPhasePending, true),
			MoveFacts{Frozen: true, Moot: moot}, infrav1.PlanPhaseApproved, ""},
		{"a frozen pass supersedes nothing", plan("p", infrav1.PlanPhasePending, false), MoveFacts{Frozen: true}, "", ""},
		{"a frozen pass still ends an applied plan", plan("p", infrav1.PlanPhaseApproved, true),
			MoveFacts{Frozen: true, Outcome: infrav1.PlanPhaseApplied}, infrav1.PlanPhaseApplied, ""},
		{"a terminal plan moves nowhere", plan("p", infrav1.PlanPhaseSuperseded, true), newest, "", ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			to, why := Move(&tc.pl, tc.f)
			if to != tc.wantTo || why != tc.wantSupersede {
				t.Errorf("Move = %q, %q; want %q, %q", to, why, tc.wantTo, tc.wantSupersede)
			}
		})
	}
}

// TestLateApproval: an approval that landed on a plan already superseded
// is marked once; an approval seen before the supersession, or marked
// already, is not late.
func TestLateApproval(t *testing.T) {
	marked := func(reason string) infrav1.TerraformPlan {
		pl := plan("p", infrav1.PlanPhaseSuperseded, true)
		pl.Status.Conditions = []metav1.Condition{{Type: infrav1.ApprovedCondition, Status: metav1.ConditionFalse, Reason: reason}}
		return pl
	}
	testCases := []struct {
		name string
		pl   infrav1.TerraformPlan
		want bool
	}{
		{"approved after it was superseded, no condition yet", plan("p", infrav1.PlanPhaseSuperseded, true), true},
		{"approved after it was superseded, still saying pending", marked(infrav1.PlanPendingReason), true},
		{"approved after it was superseded, still saying not approved", marked(infrav1.PlanNotApprovedReason), true},
		{"marked already", marked(infrav1.PlanApprovalIgnoredReason), false},
		{"superseded without approval", plan("p", infrav1.PlanPhaseSuperseded, false), false},
		{"a live approved plan", plan("p", infrav1.PlanPhaseApproved, true), false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := LateApproval(&tc.pl); got != tc.want {
				t.Errorf("LateApproval = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEndPhase: an apply that ran a plan ends it Applied when it
// succeeded, Failed when it found the plan changed, and leaves it alone
// after a failed step (the retry applies it).
func TestEndPhase(t *testing.T) {
	testCases := []struct {
		name                   string
		succeeded, planChanged bool
		want                   infrav1.PlanPhase
	}{
		{"succeeded", true, false, infrav1.PlanPhaseApplied},
		{"plan changed", false, true, infrav1.PlanPhaseFailed},
		{"a failed step", false, false, ""},
		{"succeeded, reporting the plan changed", true, true, infrav1.PlanPhaseApplied},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := EndPhase(tc.succeeded, tc.planChanged); got != tc.want {
				t.Errorf("EndPhase(%t, %t) = %q, want %q", tc.succeeded, tc.planChanged, got, tc.want)
			}
		})
	}
}
