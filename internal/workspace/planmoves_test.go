package workspace

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/guard"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestAPlanMoveThatConflictsLeavesThePlanAsRead: the plans move in the
// pass's memory before deciding; when the write finds a plan changed
// since it was read (a user approved it meanwhile), nothing is written,
// no event says it moved, and the pass goes on with the plan as read, so
// that pruning never takes a plan the API server still holds live. A move
// of a plan not changed meanwhile is written.
func TestAPlanMoveThatConflictsLeavesThePlanAsRead(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	tc := newCluster(t, "plan-moves", "demo")
	newPlan := func(name string) *infrav1.TerraformPlan {
		pl := &infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Namespace: tc.Namespace, Name: name,
			Labels: map[string]string{infrav1.PlanPhaseLabel: string(infrav1.PlanPhasePending)}},
			Spec: infrav1.TerraformPlanSpec{TargetRef: infrav1.PlanTargetReference{Kind: "TerraformCluster", Name: tc.Name},
				PlanHash: "p2:x", InputsHash: "h3:old", Reason: infrav1.PlanReasonDestructive, Summary: infrav1.PlanSummary{Replace: 1}}}
		if err := env.Client.Create(ctx, pl); err != nil {
			t.Fatal(err)
		}
		return pl
	}
	raced, quiet := newPlan("demo-raced"), newPlan("demo-quiet")
	p := &pass{e: &Engine{Client: env.Client, APIReader: env.Client}, role: roles.Cluster{}, obj: tc, w: roles.Cluster{}.View(tc)}
	p.plans = []infrav1.TerraformPlan{*raced.DeepCopy(), *quiet.DeepCopy()}
	p.planMoves = nil
	for i := range p.plans {
		p.planMoves = append(p.planMoves, guard.Move{I: i, Read: p.plans[i].DeepCopy(), To: infrav1.PlanPhaseSuperseded, Why: "the inputs no longer hash to h3:old"})
		p.plans[i].Labels = map[string]string{infrav1.PlanPhaseLabel: string(infrav1.PlanPhaseSuperseded)}
	}
	// The user approves the first plan between the pass's read and its write.
	raced.Spec.Approved, raced.Spec.ApprovedBy = ptr.To(true), "alice"
	if err := env.Client.Update(ctx, raced); err != nil {
		t.Fatal(err)
	}
	if err := p.writePlanMoves(ctx); err != nil {
		t.Fatal(err)
	}
	if got := approvals.Phase(&p.plans[0]); got != infrav1.PlanPhasePending {
		t.Errorf("the plan whose move conflicted is %s in the pass, want Pending as read", got)
	}
	if got := approvals.Prunable(p.plans); len(got) != 0 {
		t.Errorf("prunable after the moves: %d plans", len(got))
	}
	for _, c := range []struct {
		pl   *infrav1.TerraformPlan
		want infrav1.PlanPhase
	}{{raced, infrav1.PlanPhasePending}, {quiet, infrav1.PlanPhaseSuperseded}} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c.pl), c.pl); err != nil {
			t.Fatal(err)
		}
		if got := approvals.Phase(c.pl); got != c.want {
			t.Errorf("TerraformPlan %s is %s on the API server, want %s", c.pl.Name, got, c.want)
		}
	}
	var superseded []string
	for _, ev := range p.events {
		if ev.Reason == "PlanSuperseded" {
			superseded = append(superseded, ev.Note)
		}
	}
	if len(superseded) != 1 || superseded[0] != "TerraformPlan demo-quiet was superseded: the inputs no longer hash to h3:old" {
		t.Errorf("PlanSuperseded events %q, want one for demo-quiet", superseded)
	}
}
