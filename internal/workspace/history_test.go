package workspace

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/decide"
)

// TestBlockEnded: a blocked apply holds while its plan is live; once the
// plan is terminal, or gone a minute after the Job ended, it no longer
// does. A plan not found within the minute makes the pass look again once
// the minute is over (lookAgain), whatever it decides: nothing else would
// wake a settled object then.
func TestBlockEnded(t *testing.T) {
	blocked := decide.FinishedJob{Name: "apply-a1", Op: decide.OpApply, Blocked: true, PlanHash: "p2:x", FinishedAt: t0.Add(-5 * time.Minute)}
	plan := func(phase infrav1.PlanPhase) infrav1.TerraformPlan {
		return infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Name: approvals.Name("demo", "apply-a1", "p2:x"),
			Labels: map[string]string{infrav1.PlanPhaseLabel: string(phase)}}}
	}
	testCases := []struct {
		name      string
		plans     []infrav1.TerraformPlan
		job       decide.FinishedJob
		want      bool
		lookAgain time.Duration
	}{
		{"its plan waits", []infrav1.TerraformPlan{plan(infrav1.PlanPhasePending)}, blocked, false, 0},
		{"its plan is approved", []infrav1.TerraformPlan{plan(infrav1.PlanPhaseApproved)}, blocked, false, 0},
		{"its plan was superseded", []infrav1.TerraformPlan{plan(infrav1.PlanPhaseSuperseded)}, blocked, true, 0},
		{"its plan failed", []infrav1.TerraformPlan{plan(infrav1.PlanPhaseFailed)}, blocked, true, 0},
		{"its plan is gone", nil, blocked, true, 0},
		{"its plan is not in the cache yet", nil, decide.FinishedJob{Name: "apply-a1", Blocked: true, PlanHash: "p2:x", FinishedAt: t0.Add(-10 * time.Second)}, false, 51 * time.Second},
		{"no plan was reported", nil, decide.FinishedJob{Name: "apply-a1", Blocked: true, FinishedAt: t0.Add(-time.Hour)}, false, 0},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p := &pass{obj: &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, plans: tc.plans, now: t0}
			if got := p.blockEnded(tc.job); got != tc.want || p.soonest != tc.lookAgain {
				t.Errorf("blockEnded = %v, looks again in %s; want %v, %s", got, p.soonest, tc.want, tc.lookAgain)
			}
		})
	}
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
