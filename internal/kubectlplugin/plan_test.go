package kubectlplugin_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
)

func createPlan(t *testing.T, name, target, phase string) *infrav1.TerraformPlan {
	t.Helper()
	p := &infrav1.TerraformPlan{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{infrav1.PlanPhaseLabel: phase}},
		Spec: infrav1.TerraformPlanSpec{
			TargetRef: infrav1.PlanTargetReference{Kind: "TerraformCluster", Name: target},
			PlanHash:  "p2:abc", InputsHash: "h2:def", Reason: infrav1.PlanReasonDestructive,
			Summary: infrav1.PlanSummary{Replace: 1, Update: 2, Resources: []string{"null_resource.lb (replace)"}},
		},
	}
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanAndApprove(t *testing.T) {
	envtest.Require(t, env)
	createPlan(t, "prod-old", "prod", "Superseded")
	p := createPlan(t, "prod-3f9a1c7be2", "prod", "Pending")

	out, err := kubectlCaptf(t, "plan", "tfc/prod", "-n", "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TerraformPlan prod-3f9a1c7be2 (Destructive, Pending) for TerraformCluster default/prod",
		"0 to create, 2 to update, 1 to replace, 0 to delete", "null_resource.lb (replace)",
		"Approve with: kubectl captf approve tfc/prod -n default --plan prod-3f9a1c7be2"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}

	out, err = kubectlCaptf(t, "approve", "tfc/prod", "-n", "default")
	if err != nil {
		t.Fatal(err)
	}
	got := &infrav1.TerraformPlan{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Approved == nil || !*got.Spec.Approved || got.Spec.ApprovedBy != "captf-admin" {
		t.Fatalf("the plan is not approved by the kubeconfig's user: approved=%v by %q (%s)", got.Spec.Approved, got.Spec.ApprovedBy, out)
	}

	if _, err := kubectlCaptf(t, "plan", "tfc/nothing", "-n", "default"); err == nil || !strings.Contains(err.Error(), "no plan of TerraformCluster default/nothing waits for approval") {
		t.Errorf("a target without a live plan: %v", err)
	}
	if _, err := kubectlCaptf(t, "approve", "tfm/m", "-n", "default"); err == nil || !strings.Contains(err.Error(), "machines are never gated") {
		t.Errorf("approving a machine: %v", err)
	}
}
