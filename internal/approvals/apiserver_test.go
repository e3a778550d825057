package approvals

import (
	"os"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	tfplan "captf.io/captf/internal/plan"
	"captf.io/captf/internal/runner/result"
	"captf.io/captf/internal/test/envtest"
)

// env is the real API server the plans are written to.
var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

// TestPublish: a new plan is created Pending, owned by its target, and
// every other live plan of the target is superseded; the same plan
// published again (a pass bookkeeping the same Job) creates and
// supersedes nothing.
func TestPublish(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns := envtest.Namespace(t, env.Client, "publish")
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "example.test/cluster:1"}, IdentityRef: &infrav1.IdentityReference{Name: "cloud"}}}
	if err := env.Client.Create(ctx, tc); err != nil {
		t.Fatal(err)
	}
	w := Writer{Client: env.Client, Kind: "TerraformCluster"}
	planOf := func(job string) *infrav1.TerraformPlan {
		return New(ns, "TerraformCluster", tc.Name, job, &result.PlanSummary{Hash: "p2:" + job, Summary: tfplan.Summary{Delete: 1}}, infrav1.PlanReasonDestructive, "h3:in")
	}
	old := planOf("apply-a1")
	if created, superseded, err := w.Publish(ctx, tc, old, nil); err != nil || !created || len(superseded) != 0 {
		t.Fatalf("the first Publish = %v, %v, %v; want it created, superseding nothing", created, superseded, err)
	}
	plans, err := List(ctx, env.Client, tc)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || Phase(&plans[0]) != infrav1.PlanPhasePending || !metav1.IsControlledBy(&plans[0], tc) {
		t.Fatalf("after the first Publish: %d plans, the first %s; want one Pending plan controlled by its target", len(plans), Phase(&plans[0]))
	}
	next := planOf("apply-a2")
	created, superseded, err := w.Publish(ctx, tc, next, plans)
	if err != nil || !created || !slices.Equal(superseded, []string{old.Name}) {
		t.Fatalf("the second Publish = %v, %v, %v; want it created, superseding %s", created, superseded, err, old.Name)
	}
	if Phase(&plans[0]) != infrav1.PlanPhaseSuperseded {
		t.Errorf("the superseded plan is %s in the caller's list, want Superseded", Phase(&plans[0]))
	}
	stored := &infrav1.TerraformPlan{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), stored); err != nil || Phase(stored) != infrav1.PlanPhaseSuperseded {
		t.Errorf("the superseded plan is %s on the API server (%v), want Superseded", Phase(stored), err)
	}
	plans, err = List(ctx, env.Client, tc)
	if err != nil {
		t.Fatal(err)
	}
	again := planOf("apply-a2")
	if created, superseded, err := w.Publish(ctx, tc, again, plans); err != nil || created || len(superseded) != 0 {
		t.Errorf("publishing the same plan again = %v, %v, %v; want nothing done", created, superseded, err)
	}
}
