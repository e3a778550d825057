package approvals

import (
	"fmt"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	tfplan "captf.io/captf/internal/plan"
	"captf.io/captf/internal/runner/result"
)

// plan is a plan in phase ("" unlabelled), approved or not, made ago.
func plan(name string, phase infrav1.PlanPhase, approved bool) infrav1.TerraformPlan {
	pl := infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if phase != "" {
		pl.Labels[infrav1.PlanPhaseLabel] = string(phase)
	}
	if approved {
		pl.Spec.Approved, pl.Spec.ApprovedBy = ptr.To(true), "alice"
	}
	return pl
}

// TestConditions: a plan's Ready and Approved in each phase, as
// kubectl get terraformplans and the approvers read them.
func TestConditions(t *testing.T) {
	testCases := []struct {
		name               string
		phase              infrav1.PlanPhase
		approved           bool
		wantReady          metav1.ConditionStatus
		wantApproved       metav1.ConditionStatus
		wantApprovedReason string
	}{
		{"pending", infrav1.PlanPhasePending, false, metav1.ConditionTrue, metav1.ConditionFalse, infrav1.PlanPendingReason},
		{"approved", infrav1.PlanPhaseApproved, true, metav1.ConditionTrue, metav1.ConditionTrue, infrav1.PlanApprovedReason},
		{"applied", infrav1.PlanPhaseApplied, true, metav1.ConditionTrue, metav1.ConditionTrue, infrav1.PlanApprovedReason},
		{"superseded unapproved", infrav1.PlanPhaseSuperseded, false, metav1.ConditionFalse, metav1.ConditionFalse, infrav1.PlanNotApprovedReason},
		{"approved after it was superseded: ignored", infrav1.PlanPhaseSuperseded, true, metav1.ConditionFalse, metav1.ConditionFalse, infrav1.PlanApprovalIgnoredReason},
		{"failed: the approved apply planned other changes", infrav1.PlanPhaseFailed, true, metav1.ConditionFalse, metav1.ConditionTrue, infrav1.PlanApprovedReason},
		{"failed unapproved", infrav1.PlanPhaseFailed, false, metav1.ConditionFalse, metav1.ConditionFalse, infrav1.PlanNotApprovedReason},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			pl := plan("p", tc.phase, tc.approved)
			pl.Generation = 3
			ready, approved := Conditions(&pl, tc.phase)
			if ready.Status != tc.wantReady || ready.Reason != string(tc.phase) || ready.Message == "" {
				t.Errorf("Ready = %+v, want %s/%s with a message", ready, tc.wantReady, tc.phase)
			}
			if approved.Status != tc.wantApproved || approved.Reason != tc.wantApprovedReason || approved.Message == "" {
				t.Errorf("Approved = %+v, want %s/%s with a message", approved, tc.wantApproved, tc.wantApprovedReason)
			}
			if ready.ObservedGeneration != 3 || approved.ObservedGeneration != 3 {
				t.Errorf("observedGeneration %d/%d, want 3", ready.ObservedGeneration, approved.ObservedGeneration)
			}
		})
	}
}

// TestNewest: the newest live plan is the first Pending, Approved or not
// yet phased one (a moved plan); terminal ones never are.
func TestNewest(t *testing.T) {
	testCases := []struct {
		name  string
		plans []infrav1.TerraformPlan
		want  string
	}{
		{"none", nil, ""},
		{"only terminal ones", []infrav1.TerraformPlan{plan("a", infrav1.PlanPhaseApplied, true), plan("b", infrav1.PlanPhaseSuperseded, false)}, ""},
		{"the newest live one", []infrav1.TerraformPlan{plan("a", infrav1.PlanPhaseFailed, true), plan("b", infrav1.PlanPhasePending, false), plan("c", infrav1.PlanPhaseApproved, true)}, "b"},
		{"a plan no manager phased yet is live", []infrav1.TerraformPlan{plan("moved", "", true)}, "moved"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if pl := Newest(tc.plans); pl != nil {
				got = pl.Name
			}
			if got != tc.want {
				t.Errorf("Newest = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestName: a plan's name is its target's and stable for one Job's plan,
// and differs for another Job or another plan.
func TestName(t *testing.T) {
	a := Name("demo", "captf-c-demo-apply-a1-0a1b2c", "p2:abc")
	if a != Name("demo", "captf-c-demo-apply-a1-0a1b2c", "p2:abc") || len(a) != len("demo-")+10 || a[:5] != "demo-" {
		t.Fatalf("Name = %q, want demo-<10 hex>, stable", a)
	}
	if a == Name("demo", "captf-c-demo-apply-a2-0a1b2c", "p2:abc") || a == Name("demo", "captf-c-demo-apply-a1-0a1b2c", "p2:abd") {
		t.Error("another Job or another plan got the same name")
	}
}

// TestInputsOf: a pool's plan names its approval hash, any other the
// Job's inputs hash.
func TestInputsOf(t *testing.T) {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{infrav1.InputsHashAnnotation: "h2:in"}}}
	if got := InputsOf(j); got != "h2:in" {
		t.Errorf("InputsOf = %q, want the inputs hash", got)
	}
	j.Annotations[infrav1.ApprovalHashAnnotation] = "h2:approval"
	if got := InputsOf(j); got != "h2:approval" {
		t.Errorf("InputsOf = %q, want the approval hash", got)
	}
}

// TestPrunable: the terminal plans beyond the newest ten go; live ones
// never count or go, whatever their age.
func TestPrunable(t *testing.T) {
	var plans []infrav1.TerraformPlan
	plans = append(plans, plan("live-new", infrav1.PlanPhasePending, false))
	for i := range 12 {
		plans = append(plans, plan(fmt.Sprintf("done-%02d", i), infrav1.PlanPhaseApplied, true))
	}
	plans = append(plans, plan("live-old", "", true))
	var got []string
	for _, pl := range Prunable(plans) {
		got = append(got, pl.Name)
	}
	if want := []string{"done-10", "done-11"}; !slices.Equal(got, want) {
		t.Errorf("Prunable = %v, want %v", got, want)
	}
	if got := Prunable(plans[:11]); len(got) != 0 {
		t.Errorf("ten terminal plans: Prunable = %d plans, want none", len(got))
	}
}

// TestNew: the plan a Job reported becomes a TerraformPlan named for the
// Job and the plan, targeting the object, labelled with its reason and
// whether it is destructive.
func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name        string
		summary     tfplan.Summary
		destructive string
	}{
		{"an update", tfplan.Summary{Update: 2, Resources: []string{"aws_sg.a (update)"}}, "false"},
		{"a replace", tfplan.Summary{Replace: 1}, "true"},
		{"a delete", tfplan.Summary{Create: 1, Delete: 1}, "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := &result.PlanSummary{Hash: "p2:abc", Summary: tc.summary}
			pl := New("team-a", "TerraformCluster", "prod", "captf-c-prod-apply-a2-0a0b0c", rp, infrav1.PlanReasonDestructive, "h3:in")
			if pl.Namespace != "team-a" || pl.Name != Name("prod", "captf-c-prod-apply-a2-0a0b0c", "p2:abc") {
				t.Errorf("named %s/%s", pl.Namespace, pl.Name)
			}
			if pl.Spec.TargetRef != (infrav1.PlanTargetReference{Kind: "TerraformCluster", Name: "prod"}) || pl.Spec.PlanHash != "p2:abc" ||
				pl.Spec.InputsHash != "h3:in" || pl.Spec.Reason != infrav1.PlanReasonDestructive {
				t.Errorf("spec = %+v", pl.Spec)
			}
			if pl.Labels[infrav1.DestructiveLabel] != tc.destructive || pl.Labels[infrav1.PlanReasonLabel] != string(infrav1.PlanReasonDestructive) {
				t.Errorf("labels = %v, want destructive %s", pl.Labels, tc.destructive)
			}
			if s := pl.Spec.Summary; s.Replace != int32(tc.summary.Replace) || s.Delete != int32(tc.summary.Delete) || len(s.Resources) != len(tc.summary.Resources) {
				t.Errorf("summary = %+v, want the plan's", s)
			}
		})
	}
}
