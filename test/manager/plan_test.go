package manager_test

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func plan(t *testing.T, name, phase string) *infrav1.TerraformPlan {
	t.Helper()
	p := &infrav1.TerraformPlan{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{infrav1.PlanPhaseLabel: phase}},
		Spec: infrav1.TerraformPlanSpec{
			TargetRef: infrav1.PlanTargetReference{Kind: "TerraformCluster", Name: "prod"},
			PlanHash:  "p2:abc", InputsHash: "h2:def", Reason: infrav1.PlanReasonDestructive,
			Summary: infrav1.PlanSummary{Replace: 1},
		},
	}
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// An approval names the user who makes it, a finished plan cannot be
// approved, and only the manager moves a plan's phase.
func TestPlanApprovals(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "approvers"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"infrastructure.cluster.x-k8s.io"}, Resources: []string{"terraformplans"}, Verbs: []string{"get", "list", "patch", "update"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "approvers"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "approvers"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "approvers"}}}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := env.ControlPlane.AddUser("alice", "approvers")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	approve := func(p *infrav1.TerraformPlan, by string) error {
		patch := `{"spec":{"approved":true,"approvedBy":"` + by + `"}}`
		return alice.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch)))
	}

	pending := plan(t, "prod-pending", "Pending")
	if err := approve(pending, "bob"); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "must be the user approving, alice") {
		t.Fatalf("an approval in someone else's name: %v", err)
	}
	if err := approve(pending, "alice"); err != nil {
		t.Fatalf("alice's own approval was refused: %v", err)
	}

	done := plan(t, "prod-superseded", "Superseded")
	if err := approve(done, "alice"); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "can no longer be approved") {
		t.Fatalf("approving a superseded plan: %v", err)
	}

	phase := plan(t, "prod-phase", "Pending")
	err = alice.Patch(ctx, phase, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"`+infrav1.PlanPhaseLabel+`":"Applied"}}}`)))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "only the manager changes a plan's phase") {
		t.Fatalf("a user moving a plan's phase: %v", err)
	}
}
