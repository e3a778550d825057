package guard

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/plan"
	"captf.io/captf/internal/records"
)

var (
	tfvarsE1 = []byte(`{"bootstrap_data":"b","captf_cluster_outputs":{"network_id":"n-1"}}`)
	tfvarsE2 = []byte(`{"bootstrap_data":"b","captf_cluster_outputs":{"network_id":"n-2"}}`)
	e1, e2   = inputs.ExportsHash(tfvarsE1), inputs.ExportsHash(tfvarsE2)
)

// pool is what a pass reads of a provisioned pool whose state holds inputs
// hash h2:applied and whose applied record rendered exports E1.
func pool() Facts {
	return Facts{GuardsExports: true, StateInputsHash: (Keying{}).Keyed("h2:applied"),
		Attempt: &records.Record{AppliedExports: e1},
		Applied: &records.Record{InputsHash: "h2:applied", Tfvars: tfvarsE1}}
}

func TestExportsGuarded(t *testing.T) {
	testCases := []struct {
		name     string
		change   func(*Facts)
		rendered string
		want     bool
	}{
		{"the applied exports", func(*Facts) {}, e1, false},
		{"other exports", func(*Facts) {}, e2, true},
		{"partly applied: every apply", func(f *Facts) { f.Attempt.PartialExports = `{"job":"j"}` }, e1, true},
		{"never applied", func(f *Facts) { f.StateAbsent, f.StateInputsHash, f.Attempt = true, "", nil }, e2, false},
		{"no record: the applied record proves the baseline", func(f *Facts) { f.Attempt.AppliedExports = "" }, e1, false},
		{"no record: a change from the proven baseline", func(f *Facts) { f.Attempt.AppliedExports = "" }, e2, true},
		{"no record and nothing proves the baseline", func(f *Facts) {
			f.Attempt.AppliedExports, f.Applied.InputsHash = "", "h2:other"
		}, e1, true},
		{"a cluster guards no exports", func(f *Facts) { f.GuardsExports = false }, e2, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			f := pool()
			tc.change(&f)
			f.Exports = tc.rendered
			if got := f.ExportsGuarded(); got != tc.want {
				t.Errorf("ExportsGuarded = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHoldBack(t *testing.T) {
	pending := infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Name: "pool-abc", Labels: map[string]string{infrav1.PlanPhaseLabel: "Pending"}},
		Spec: infrav1.TerraformPlanSpec{Reason: infrav1.PlanReasonExportsChange, InputsHash: "a2:change"}}
	testCases := []struct {
		name              string
		change            func(*Facts)
		approval, exports string
		held              bool
	}{
		{"a pending exports change is held back", func(*Facts) {}, "a2:change", e2, true},
		{"the applied exports hold nothing", func(*Facts) {}, "a2:change", e1, false},
		{"an approved plan lets the change through", func(f *Facts) { f.Plans[0].Spec.Approved = ptr.To(true) }, "a2:change", e2, false},
		{"a plan of other inputs holds nothing", func(*Facts) {}, "a2:other", e2, false},
		{"no plan yet: the guarded apply runs", func(f *Facts) { f.Plans = nil }, "a2:change", e2, false},
		{"partly applied: nothing is held", func(f *Facts) { f.Attempt.PartialExports = `{"job":"j"}` }, "a2:change", e2, false},
		{"the applied record lost: nothing to render", func(f *Facts) { f.Applied = nil }, "a2:change", e2, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			f := pool()
			f.Plans = []infrav1.TerraformPlan{*pending.DeepCopy()}
			tc.change(&f)
			h := f.HoldBack(tc.approval, tc.exports)
			if (h != nil) != tc.held {
				t.Fatalf("HoldBack = %+v, want held %v", h, tc.held)
			}
			if h != nil && (h.Plan != "pool-abc" || h.Approval != "a2:change" || !json.Valid(h.Applied) || inputs.ExportsHash([]byte(`{"captf_cluster_outputs":`+string(h.Applied)+`}`)) != e1) {
				t.Errorf("held %+v: want the plan, the change's approval hash and the applied exports", h)
			}
		})
	}
}

// cluster is what a pass reads of a cluster whose current inputs hash to
// h3:now, with plan pl as its newest.
func cluster(pl *infrav1.TerraformPlan) Facts {
	f := Facts{InputsHash: "h3:now", Target: "tc/prod"}
	if pl != nil {
		f.Plans = []infrav1.TerraformPlan{*pl}
	}
	return f
}

func livePlan(name, inputsHash string, reason infrav1.PlanReason, approved bool) *infrav1.TerraformPlan {
	pl := &infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{infrav1.PlanPhaseLabel: "Pending"}},
		Spec: infrav1.TerraformPlanSpec{Reason: reason, InputsHash: inputsHash, PlanHash: plan.HashPrefix + "abc",
			Summary: infrav1.PlanSummary{Delete: 1, Resources: []string{"aws_instance.a (delete)", "aws_sg.b (update)"}}}}
	if approved {
		pl.Spec.Approved = ptr.To(true)
		pl.Labels[infrav1.PlanPhaseLabel] = "Approved"
	}
	return pl
}

// TestWhichPlanStands: the live plan of the current inputs stands,
// approved or pending; one of other inputs, or any while a pool holds its
// change back, does not; a Manual plan is never a pending destructive one.
func TestWhichPlanStands(t *testing.T) {
	testCases := []struct {
		name              string
		f                 Facts
		approved, pending bool
	}{
		{"no plan", cluster(nil), false, false},
		{"a pending plan of the inputs", cluster(livePlan("p", "h3:now", infrav1.PlanReasonDestructive, false)), false, true},
		{"an approved plan of the inputs", cluster(livePlan("p", "h3:now", infrav1.PlanReasonDestructive, true)), true, false},
		{"a plan of other inputs", cluster(livePlan("p", "h3:old", infrav1.PlanReasonDestructive, true)), false, false},
		{"a Manual plan waits, but not as a destructive one", cluster(livePlan("p", "h3:now", infrav1.PlanReasonManual, false)), false, false},
		{"inputs that do not build", func() Facts {
			f := cluster(livePlan("p", "", infrav1.PlanReasonDestructive, true))
			f.InputsHash = ""
			return f
		}(), false, false},
		{"a pool holding its change back", func() Facts {
			f := cluster(livePlan("p", "a2:held", infrav1.PlanReasonExportsChange, false))
			f.GuardsExports, f.Held = true, &Held{Plan: "p", Approval: "a2:held"}
			return f
		}(), false, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.Approved() != nil; got != tc.approved {
				t.Errorf("Approved = %v, want %v", got, tc.approved)
			}
			if got := tc.f.Pending() != nil; got != tc.pending {
				t.Errorf("Pending = %v, want %v", got, tc.pending)
			}
		})
	}
}

// TestMoot: a live plan stops standing, and says why, when the inputs
// moved, the applyPolicy changed, its hash is of an older scheme, or no
// apply is due any more (unless a pool holds the change back).
func TestMoot(t *testing.T) {
	destructive := livePlan("p", "h3:now", infrav1.PlanReasonDestructive, false)
	testCases := []struct {
		name       string
		f          Facts
		pl         *infrav1.TerraformPlan
		noApplyDue bool
		want       string
	}{
		{"it stands", cluster(destructive), destructive, false, ""},
		{"the inputs moved", func() Facts { f := cluster(destructive); f.InputsHash = "h3:new"; return f }(), destructive, false, "the inputs no longer hash to h3:now"},
		{"Manual now", func() Facts { f := cluster(destructive); f.Manual = true; return f }(), destructive, false, "applyPolicy is Manual now: a plan Job plans the next apply"},
		{"no longer Manual", cluster(livePlan("p", "h3:now", infrav1.PlanReasonManual, false)), livePlan("p", "h3:now", infrav1.PlanReasonManual, false), false, "applyPolicy is no longer Manual"},
		{"an older hash scheme", cluster(destructive), func() *infrav1.TerraformPlan { pl := destructive.DeepCopy(); pl.Spec.PlanHash = "p1:old"; return pl }(), false,
			"its plan hash is of an older scheme; the next apply plans again and asks for a fresh approval"},
		{"no apply due", cluster(destructive), destructive, true, "no apply of these inputs is due any more"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.Moot(tc.pl, tc.noApplyDue); got != tc.want {
				t.Errorf("Moot = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlanStatus: under Manual, the plan of the current inputs is
// approved, pending, or planned empty by a plan Job newer than the
// newest apply.
func TestPlanStatus(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	emptyPlan := decide.FinishedJob{Name: "plan", Op: decide.OpPlan, Succeeded: true, InputsHash: "h3:now", PlanHash: plan.EmptyPlanHash, FinishedAt: at}
	olderApply := decide.FinishedJob{Name: "apply", Op: decide.OpApply, Succeeded: true, FinishedAt: at.Add(-time.Minute)}
	newerApply := olderApply
	newerApply.FinishedAt = at.Add(time.Minute)
	manual := func(pl *infrav1.TerraformPlan) Facts { f := cluster(pl); f.Manual = true; return f }
	testCases := []struct {
		name    string
		f       Facts
		history []decide.FinishedJob
		want    decide.PlanStatus
	}{
		{"not Manual", cluster(livePlan("p", "h3:now", infrav1.PlanReasonManual, true)), nil, decide.PlanNone},
		{"approved", manual(livePlan("p", "h3:now", infrav1.PlanReasonManual, true)), nil, decide.PlanApproved},
		{"pending", manual(livePlan("p", "h3:now", infrav1.PlanReasonManual, false)), nil, decide.PlanPending},
		{"planned empty after the newest apply", manual(nil), []decide.FinishedJob{emptyPlan, olderApply}, decide.PlanEmpty},
		{"planned empty before the newest apply", manual(nil), []decide.FinishedJob{newerApply, emptyPlan}, decide.PlanNone},
		{"nothing planned", manual(nil), nil, decide.PlanNone},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.PlanStatus(tc.history); got != tc.want {
				t.Errorf("PlanStatus = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBlockedMessage names the plan, its destructive changes and how to
// approve it; a pool whose every apply is guarded says why.
func TestBlockedMessage(t *testing.T) {
	f := cluster(livePlan("tfp-prod-0abc", "h3:now", infrav1.PlanReasonDestructive, false))
	got := f.BlockedMessage()
	for _, want := range []string{"TerraformPlan tfp-prod-0abc plans inputs hash h3:now", "aws_instance.a (delete)", "kubectl captf approve tc/prod"} {
		if !strings.Contains(got, want) {
			t.Errorf("BlockedMessage = %q, want it to say %q", got, want)
		}
	}
	if strings.Contains(got, "aws_sg.b") {
		t.Errorf("BlockedMessage = %q names an update as destructive", got)
	}
	p := pool()
	p.Plans, p.Approval, p.Target = []infrav1.TerraformPlan{*livePlan("tfmp-pool-0abc", "a2:x", infrav1.PlanReasonExportsChange, false)}, "a2:x", "tmp/pool"
	p.Attempt.PartialExports = `{"Job":"captf-mp-pool-apply-a1-0a0b0c"}`
	if got := p.BlockedMessage(); !strings.Contains(got, "may have partly applied (Job captf-mp-pool-apply-a1-0a0b0c)") {
		t.Errorf("a pool's BlockedMessage = %q, want it to say an earlier change may have partly applied", got)
	}
	if got := cluster(nil).BlockedMessage(); !strings.Contains(got, "the runner reported no plan to approve") {
		t.Errorf("without a plan: %q", got)
	}
}
