package guard

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/jobs"
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

// TestKeying: a stored h2 digest of an earlier release compares in the
// current scheme (rekeyed with the plan key), an h3 hash stays as it is,
// and under an ephemeral key an h2 digest is dropped, so that it is never
// written keyed with a key nothing keeps.
func TestKeying(t *testing.T) {
	key := []byte(strings.Repeat("k", inputs.MinKeyBytes))
	k := Keying{Key: key}
	rekeyed := inputs.Rekey(key, "h2:old")
	if !strings.HasPrefix(rekeyed, inputs.HashScheme+":") {
		t.Fatalf("Rekey(h2:old) = %q, want the current scheme", rekeyed)
	}
	if got := k.Keyed("h2:old"); got != rekeyed {
		t.Errorf("Keyed(h2:old) = %q, want %q", got, rekeyed)
	}
	if got := k.Keyed("h3:now"); got != "h3:now" {
		t.Errorf("Keyed(h3:now) = %q, want it as it is", got)
	}
	if got := (Keying{Key: key, Ephemeral: true}).Keyed("h2:old"); got != "" {
		t.Errorf("under an ephemeral key Keyed(h2:old) = %q, want it dropped", got)
	}
	if got := k.Record(&records.Record{InputsHash: "h2:old", Job: "j"}); got.InputsHash != rekeyed || got.Job != "j" {
		t.Errorf("Record = %+v, want a copy with its hash rekeyed", got)
	}
	if k.Record(nil) != nil {
		t.Error("Record(nil) is not nil")
	}
	// A plan approved under an earlier release still stands.
	f := cluster(livePlan("p", "h2:old", infrav1.PlanReasonDestructive, true))
	f.Keying, f.InputsHash = k, rekeyed
	if f.Approved() == nil {
		t.Error("a plan whose stored h2 hash rekeys to the current inputs does not stand")
	}
}

// TestAnExportsChangeWithdrawnIsMoot: a pool's live ExportsChange plan no
// longer stands once its inputs render the applied exports again; while
// the pool holds a change back, no apply being due does not make it moot.
func TestAnExportsChangeWithdrawnIsMoot(t *testing.T) {
	pl := livePlan("tfmp-pool-0abc", "a2:change", infrav1.PlanReasonExportsChange, false)
	f := pool()
	f.Plans, f.Approval, f.Exports = []infrav1.TerraformPlan{*pl}, "a2:change", e1
	if got := f.Moot(pl, false); got != "the pool's inputs render the cluster exports of its last successful apply again" {
		t.Errorf("exports back to the applied ones: Moot = %q", got)
	}
	f.Exports = e2
	if got := f.Moot(pl, false); got != "" {
		t.Errorf("exports still changed: Moot = %q, want it standing", got)
	}
	f.Held = &Held{Plan: pl.Name, Approval: "a2:change", Exports: e2}
	if got := f.Moot(pl, true); got != "" {
		t.Errorf("held back, no apply due: Moot = %q, want it standing", got)
	}
	f.Held.Exports = e1
	if !f.ExportsWithdrawn(pl) {
		t.Error("a held change back to the applied exports is not withdrawn")
	}
}

// TestLastRealApply: the newest apply that applied or failed, skipping
// the ones stopped before a plan (the newest of which is the withdrawn
// change) and the interrupted ones.
func TestLastRealApply(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	job := func(name string, ago time.Duration, change func(*decide.FinishedJob)) decide.FinishedJob {
		j := decide.FinishedJob{Name: name, Op: decide.OpApply, FinishedAt: at.Add(-ago)}
		change(&j)
		return j
	}
	history := []decide.FinishedJob{
		job("interrupted", time.Minute, func(j *decide.FinishedJob) { j.Interrupted = true }),
		job("blocked", 2*time.Minute, func(j *decide.FinishedJob) { j.Blocked = true }),
		job("changed", 3*time.Minute, func(j *decide.FinishedJob) { j.PlanChanged = true }),
		job("applied", 4*time.Minute, func(j *decide.FinishedJob) { j.Succeeded = true }),
	}
	last, withdrawn, found := LastRealApply(history)
	if !found || last.Name != "applied" || withdrawn != "blocked" {
		t.Errorf("LastRealApply = %s, %q, %v; want applied, withdrawn blocked", last.Name, withdrawn, found)
	}
	if _, _, found := LastRealApply(history[:3]); found {
		t.Error("found a real apply among stopped and interrupted ones")
	}
}

// TestAwaitingMessage names the Manual plan and how to approve it.
func TestAwaitingMessage(t *testing.T) {
	f := cluster(livePlan("tfp-prod-0abc", "h3:now", infrav1.PlanReasonManual, false))
	if got := f.AwaitingMessage(); !strings.Contains(got, "TerraformPlan tfp-prod-0abc plans inputs hash h3:now") || !strings.Contains(got, "kubectl captf approve tc/prod") {
		t.Errorf("AwaitingMessage = %q", got)
	}
	if got := cluster(nil).AwaitingMessage(); got != "The plan of the current inputs waits for approval" {
		t.Errorf("without a plan: %q", got)
	}
}

// TestMovePlans: before the decision, the plans move in the pass's
// memory: an approval is recorded, an older or moot live plan is
// superseded (not while frozen, a Job runs or the inputs do not build), a
// bookkept apply's outcome ends its plan, and a late approval is marked
// naming the live plan; the plans as read are not changed.
func TestMovePlans(t *testing.T) {
	type want struct {
		name string
		to   infrav1.PlanPhase
		why  string
	}
	superseded := func(name string) infrav1.TerraformPlan {
		pl := livePlan(name, "h3:gone", infrav1.PlanReasonDestructive, true)
		pl.Labels[infrav1.PlanPhaseLabel] = string(infrav1.PlanPhaseSuperseded)
		return *pl
	}
	applyOf := func(plan string, succeeded bool) batchv1.Job {
		c := batchv1.JobCondition{Type: batchv1.JobFailed, Status: "True"}
		if succeeded {
			c.Type = batchv1.JobComplete
		}
		return batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "apply-" + plan, Annotations: map[string]string{
			infrav1.PlanAnnotation: plan, infrav1.BookkeptAnnotation: "true", infrav1.PlanChangedAnnotation: "true"}},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{c}}}
	}
	testCases := []struct {
		name  string
		plans []infrav1.TerraformPlan
		m     Moving
		edit  func(*Facts)
		want  []want
	}{
		{"a pending plan of the inputs stays", []infrav1.TerraformPlan{*livePlan("new", "h3:now", infrav1.PlanReasonDestructive, false)}, Moving{}, nil, nil},
		{"an approval is recorded", []infrav1.TerraformPlan{*func() *infrav1.TerraformPlan {
			pl := livePlan("new", "h3:now", infrav1.PlanReasonDestructive, true)
			pl.Labels[infrav1.PlanPhaseLabel] = "Pending"
			return pl
		}()}, Moving{}, nil, []want{{"new", infrav1.PlanPhaseApproved, ""}}},
		{"the inputs moved: superseded", []infrav1.TerraformPlan{*livePlan("new", "h3:old", infrav1.PlanReasonDestructive, false)}, Moving{}, nil,
			[]want{{"new", infrav1.PlanPhaseSuperseded, "the inputs no longer hash to h3:old"}}},
		{"an older live plan is superseded", []infrav1.TerraformPlan{*livePlan("new", "h3:now", infrav1.PlanReasonDestructive, false), *livePlan("old", "h3:now", infrav1.PlanReasonDestructive, false)},
			Moving{}, nil, []want{{"old", infrav1.PlanPhaseSuperseded, "a newer plan replaced it"}}},
		{"frozen: nothing is superseded", []infrav1.TerraformPlan{*livePlan("new", "h3:old", infrav1.PlanReasonDestructive, false), *livePlan("old", "h3:now", infrav1.PlanReasonDestructive, false)},
			Moving{Frozen: true}, nil, nil},
		{"a Job runs: no plan is moot", []infrav1.TerraformPlan{*livePlan("new", "h3:old", infrav1.PlanReasonDestructive, false)}, Moving{Running: true}, nil, nil},
		{"the inputs do not build: no plan is moot", []infrav1.TerraformPlan{*livePlan("new", "h3:old", infrav1.PlanReasonDestructive, false)}, Moving{}, func(f *Facts) { f.InputsHash = "" }, nil},
		{"no apply due: the plan is moot", []infrav1.TerraformPlan{*livePlan("new", "h3:now", infrav1.PlanReasonDestructive, false)}, Moving{NoApplyDue: true}, nil,
			[]want{{"new", infrav1.PlanPhaseSuperseded, "no apply of these inputs is due any more"}}},
		{"its apply succeeded, even frozen: Applied", []infrav1.TerraformPlan{*livePlan("new", "h3:old", infrav1.PlanReasonDestructive, true)},
			Moving{Frozen: true, Jobs: []batchv1.Job{applyOf("new", true)}}, nil, []want{{"new", infrav1.PlanPhaseApplied, ""}}},
		{"its apply found the plan changed: Failed", []infrav1.TerraformPlan{*livePlan("new", "h3:now", infrav1.PlanReasonDestructive, true)},
			Moving{Jobs: []batchv1.Job{applyOf("new", false)}}, nil, []want{{"new", infrav1.PlanPhaseFailed, ""}}},
		{"a late approval names the live plan", []infrav1.TerraformPlan{*livePlan("new", "h3:now", infrav1.PlanReasonDestructive, false), superseded("old")},
			Moving{}, nil, []want{{"old", infrav1.PlanPhaseSuperseded, "late: the current plan is new"}}},
		{"a late approval names the live plan as moved", []infrav1.TerraformPlan{*livePlan("new", "h3:old", infrav1.PlanReasonDestructive, false), superseded("old")}, Moving{}, nil,
			[]want{{"new", infrav1.PlanPhaseSuperseded, "the inputs no longer hash to h3:old"}, {"old", infrav1.PlanPhaseSuperseded, "late: no plan waits for approval now"}}},
		{"a Job runs: an approval is recorded, an older plan superseded", []infrav1.TerraformPlan{*livePlan("new", "h3:now", infrav1.PlanReasonDestructive, false), *func() *infrav1.TerraformPlan {
			pl := livePlan("old", "h3:now", infrav1.PlanReasonDestructive, true)
			pl.Labels[infrav1.PlanPhaseLabel] = "Pending"
			return pl
		}()}, Moving{Running: true}, nil, []want{{"old", infrav1.PlanPhaseSuperseded, "a newer plan replaced it"}}},
		{"an apply not bookkept yet ends nothing", []infrav1.TerraformPlan{*livePlan("new", "h3:now", infrav1.PlanReasonDestructive, true)},
			Moving{Jobs: []batchv1.Job{func() batchv1.Job {
				j := applyOf("new", true)
				delete(j.Annotations, infrav1.BookkeptAnnotation)
				return j
			}()}}, nil, nil},
		{"another plan's apply ends nothing", []infrav1.TerraformPlan{*livePlan("new", "h3:now", infrav1.PlanReasonDestructive, true)},
			Moving{Jobs: []batchv1.Job{applyOf("other", true)}}, nil, nil},
		{"a failed apply whose plan did not change ends nothing", []infrav1.TerraformPlan{*livePlan("new", "h3:now", infrav1.PlanReasonDestructive, true)},
			Moving{Jobs: []batchv1.Job{func() batchv1.Job {
				j := applyOf("new", false)
				delete(j.Annotations, infrav1.PlanChangedAnnotation)
				return j
			}()}}, nil, nil},
		{"a late approval with no live plan", []infrav1.TerraformPlan{superseded("old")}, Moving{}, nil,
			[]want{{"old", infrav1.PlanPhaseSuperseded, "late: no plan waits for approval now"}}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			f := cluster(nil)
			f.Plans = tc.plans
			if tc.edit != nil {
				tc.edit(&f)
			}
			read := make([]string, len(tc.plans))
			for i := range tc.plans {
				read[i] = string(approvals.Phase(&tc.plans[i]))
			}
			plans, moves := f.MovePlans(tc.m)
			var got []want
			for _, mv := range moves {
				w := want{mv.Read.Name, mv.To, mv.Why}
				if mv.LateApproval {
					w.why = "late: " + mv.Current
				}
				got = append(got, w)
				if mv.Read.Name != plans[mv.I].Name {
					t.Errorf("move %d indexes %s, want %s", mv.I, plans[mv.I].Name, mv.Read.Name)
				}
				if p := approvals.Phase(&plans[mv.I]); !mv.LateApproval && p != mv.To {
					t.Errorf("%s is %s as moved, want %s", mv.Read.Name, p, mv.To)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("moves = %v, want %v", got, tc.want)
			}
			for i := range tc.plans {
				if p := string(approvals.Phase(&tc.plans[i])); p != read[i] {
					t.Errorf("the plan %s as read moved to %s", tc.plans[i].Name, p)
				}
			}
		})
	}
}

// TestJobGuard: a guarded apply stops before deletes unless it applies
// its approved plan, or, under Manual, a plan Job planned it empty; a
// pool's apply that changes its cluster exports stops before deletes
// until its ExportsChange plan is approved; anything else runs
// unguarded. The history is read only for an unapproved guarded apply.
func TestJobGuard(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	emptyPlan := []decide.FinishedJob{{Name: "plan", Op: decide.OpPlan, Succeeded: true, InputsHash: "h3:now", PlanHash: plan.EmptyPlanHash, FinishedAt: at}}
	exportsPlan := func(approved bool) Facts {
		f := cluster(livePlan("p", "a2:change", infrav1.PlanReasonExportsChange, approved))
		f.GuardsExports, f.Approval = true, "a2:change"
		return f
	}
	manual := cluster(nil)
	manual.Manual = true
	for _, tc := range []struct {
		name                     string
		f                        Facts
		op                       decide.Operation
		everyApply, exportsGuard bool
		history                  []decide.FinishedJob
		want                     jobs.Guard
		approved, readHistory    bool
	}{
		{"a guarded apply", cluster(nil), decide.OpApply, true, false, nil, jobs.Guard{Deletes: true, InputsHash: "h3:in"}, false, true},
		{"a guarded apply of its approved plan", cluster(livePlan("p", "h3:now", infrav1.PlanReasonDestructive, true)), decide.OpApply, true, false, nil,
			jobs.Guard{ExpectPlan: plan.HashPrefix + "abc"}, true, false},
		{"a Manual apply planned empty", manual, decide.OpApply, true, false, emptyPlan, jobs.Guard{ExpectPlan: plan.EmptyPlanHash}, false, true},
		{"a guarded object's destroy", cluster(nil), decide.OpDestroy, true, false, nil, jobs.Guard{}, false, false},
		{"a pool's apply changing its exports", exportsPlan(false), decide.OpApply, false, true, nil, jobs.Guard{Deletes: true, InputsHash: "a2:change"}, false, false},
		{"a pool's exports change approved", exportsPlan(true), decide.OpApply, false, true, nil,
			jobs.Guard{Deletes: true, InputsHash: "a2:change", AllowDeletesHash: "a2:change"}, true, false},
		{"a pool's apply rendering its applied exports", exportsPlan(false), decide.OpApply, false, false, nil, jobs.Guard{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := false
			got, approved := tc.f.JobGuard(tc.op, "h3:in", tc.everyApply, tc.exportsGuard, func() []decide.FinishedJob { read = true; return tc.history })
			if got != tc.want || (approved != nil) != tc.approved || read != tc.readHistory {
				t.Errorf("JobGuard = %+v, approved %v, history read %v; want %+v, %v, %v", got, approved != nil, read, tc.want, tc.approved, tc.readHistory)
			}
		})
	}
}

// TestBlockEnded: a blocked apply holds while its plan is live; once the
// plan is terminal, or gone a minute after the Job ended, it no longer
// does. A plan not found within the minute makes the pass look again once
// the minute is over (lookAgain), whatever it decides: nothing else would
// wake a settled object then.
func TestBlockEnded(t *testing.T) {
	blocked := decide.FinishedJob{Name: "apply-a1", Op: decide.OpApply, Blocked: true, PlanHash: "p2:x", FinishedAt: blockT0.Add(-5 * time.Minute)}
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
		{"its plan is not in the cache yet", nil, decide.FinishedJob{Name: "apply-a1", Blocked: true, PlanHash: "p2:x", FinishedAt: blockT0.Add(-10 * time.Second)}, false, 51 * time.Second},
		{"no plan was reported", nil, decide.FinishedJob{Name: "apply-a1", Blocked: true, FinishedAt: blockT0.Add(-time.Hour)}, false, 0},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got, lookAgain := BlockEnded(tc.job, tc.plans, "demo", blockT0); got != tc.want || lookAgain != tc.lookAgain {
				t.Errorf("BlockEnded = %v, looks again in %s; want %v, %s", got, lookAgain, tc.want, tc.lookAgain)
			}
		})
	}
}

var blockT0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// TestHistory: the history keys the Jobs' inputs hashes, marks a blocked
// apply whose plan ended, and says how soon to look again for a blocked
// apply's plan not found yet: the soonest of them.
func TestHistory(t *testing.T) {
	finished := func(name string, ago time.Duration, ann map[string]string) batchv1.Job {
		return batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{infrav1.OperationLabel: "apply"}, Annotations: ann},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: "True", LastTransitionTime: metav1.NewTime(blockT0.Add(-ago))}}}}
	}
	blocked := func(name string, ago time.Duration) batchv1.Job {
		return finished(name, ago, map[string]string{infrav1.DestructivePlanBlockedAnnotation: "true", infrav1.PlanHashAnnotation: "p2:" + name,
			infrav1.InputsHashAnnotation: "h2:abc"})
	}
	js := []batchv1.Job{blocked("a2", 10*time.Second), blocked("a1", 40*time.Second), blocked("a3", time.Hour), {ObjectMeta: metav1.ObjectMeta{Name: "running"}}}
	k := Keying{Key: []byte(strings.Repeat("k", 32))}
	out, lookAgain := History(js, k, nil, "demo", blockT0)
	if len(out) != 3 {
		t.Fatalf("History has %d Jobs, want the 3 finished", len(out))
	}
	if out[0].PlanEnded || out[1].PlanEnded || !out[2].PlanEnded {
		t.Errorf("plans ended: %v %v %v; want only the hour-old one's", out[0].PlanEnded, out[1].PlanEnded, out[2].PlanEnded)
	}
	if lookAgain != 21*time.Second {
		t.Errorf("looks again in %s, want 21s (the soonest minute over, and a second)", lookAgain)
	}
	if out[0].InputsHash != k.Keyed("h2:abc") || out[0].InputsHash == "h2:abc" {
		t.Errorf("the inputs hash %q is not keyed", out[0].InputsHash)
	}
}
