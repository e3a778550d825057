package e2e

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/kubectlplugin"
)

// A real replace: the Cluster's pod network changes, which the noop
// cluster module's network resource is replaced for. The destructive guard
// stops the TerraformCluster's apply before it with a TerraformPlan; the
// user approves it with `kubectl captf approve`, and exactly that plan is
// applied.
func guardedReplace(t *testing.T, ctx context.Context, f *flow) {
	objs := pick(f.quickstart("tofu"), f.base()...)
	f.create(ctx, objs)
	var tc infrav1.TerraformCluster
	f.waitFor(ctx, "the TerraformCluster is provisioned", jobWait, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		return provisionedReady(tc.Status.WorkspaceStatus), ready(tc.Status.Conditions), nil
	})
	var cluster clusterv1.Cluster
	if err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "quickstart"}, &cluster); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cluster.DeepCopy())
	cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"10.7.0.0/16"}
	if err := f.env.Client.Patch(ctx, &cluster, patch); err != nil {
		t.Fatal(err)
	}
	f.waitFor(ctx, "the apply is blocked before the replace", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		c := conditionOf(tc.Status.Conditions, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.DestructivePlanBlockedReason && tc.Status.PendingPlanRef != nil, ready(tc.Status.Conditions), nil
	})
	var plan infrav1.TerraformPlan
	if _, err := f.get(ctx, tc.Status.PendingPlanRef.Name, &plan); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(plan.Spec.Summary.Resources, "module.role.terraform_data.network (replace)") {
		t.Errorf("TerraformPlan %s lists %v, want the network replaced", plan.Name, plan.Spec.Summary.Resources)
	}

	if out := f.approve(ctx, "tfc/quickstart"); !strings.Contains(out, "TerraformPlan "+plan.Name+" approved by") {
		t.Errorf("kubectl captf approve said %q", out)
	}
	f.waitFor(ctx, "the approved plan is applied", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, plan.Name, &plan); err != nil {
			return false, "", err
		}
		return plan.Labels[infrav1.PlanPhaseLabel] == string(infrav1.PlanPhaseApplied), "plan phase " + plan.Labels[infrav1.PlanPhaseLabel], nil
	})
	var jobs batchv1.JobList
	if err := f.env.Client.List(ctx, &jobs, client.InNamespace(f.ns), client.MatchingLabels{infrav1.OperationLabel: string(infrav1.OperationApply)}); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(jobs.Items, func(j batchv1.Job) bool {
		return j.Status.Succeeded > 0 && strings.Contains(strings.Join(j.Spec.Template.Spec.Containers[0].Args, " "), "--expect-plan="+plan.Spec.PlanHash)
	}) {
		t.Error("no successful apply Job ran with --expect-plan of the approved plan")
	}
	f.teardown(ctx, objs, "tofu")
}

// approve runs `kubectl captf approve <target>` in the flow's namespace
// and returns what it printed.
func (f *flow) approve(ctx context.Context, target string) string {
	f.t.Helper()
	var out, errOut bytes.Buffer
	cmd := kubectlplugin.NewCommand(kubectlplugin.Streams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"approve", target, "-n", f.ns, "--kubeconfig", f.env.Kubeconfig})
	if err := cmd.ExecuteContext(ctx); err != nil {
		f.t.Fatalf("kubectl captf approve: %v\n%s", err, errOut.String())
	}
	return out.String()
}

func conditionOf(conds []metav1.Condition, t string) *metav1.Condition {
	return meta.FindStatusCondition(conds, t)
}
