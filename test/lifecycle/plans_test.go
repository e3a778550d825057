package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// waitBlocked waits until a TerraformCluster's apply stopped before a
// destructive plan and returns the Pending TerraformPlan it names.
func (w *world) waitBlocked(tc *infrav1.TerraformCluster) *infrav1.TerraformPlan {
	w.t.Helper()
	w.eventually(2*time.Minute, "the apply blocked with a plan to approve", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.DestructivePlanBlockedReason && tc.Status.PendingPlanRef != nil, nil
	})
	if c := conditionOf(tc, infrav1.ApplyJobSucceededCondition); !strings.Contains(c.Message, tc.Status.PendingPlanRef.Name) {
		w.t.Errorf("DestructivePlanBlocked message %q does not name the plan %s", c.Message, tc.Status.PendingPlanRef.Name)
	}
	plan := &infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tc.Status.PendingPlanRef.Name}}
	w.get(plan)
	if plan.Labels[infrav1.PlanPhaseLabel] != string(infrav1.PlanPhasePending) || plan.Spec.Reason != infrav1.PlanReasonDestructive {
		w.t.Errorf("TerraformPlan %s: phase %q, reason %q; want a Pending Destructive plan", plan.Name, plan.Labels[infrav1.PlanPhaseLabel], plan.Spec.Reason)
	}
	return plan
}

// waitAwaitingApproval waits until a Manual TerraformCluster's plan waits
// for approval and returns it.
func (w *world) waitAwaitingApproval(tc *infrav1.TerraformCluster) *infrav1.TerraformPlan {
	w.t.Helper()
	w.eventually(2*time.Minute, "PlanAwaitingApproval", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.PlanAwaitingApprovalReason && tc.Status.PendingPlanRef != nil, nil
	})
	plan := &infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tc.Status.PendingPlanRef.Name}}
	w.get(plan)
	return plan
}

// approve approves a plan as the test's user.
func (w *world) approve(plan *infrav1.TerraformPlan) {
	w.t.Helper()
	if err := w.tryApprove(plan); err != nil {
		w.t.Fatalf("approving TerraformPlan %s: %v", plan.Name, err)
	}
}

// tryApprove approves a plan as kubectl captf approve does: spec.approved
// and spec.approvedBy naming the requesting user.
func (w *world) tryApprove(plan *infrav1.TerraformPlan) error {
	w.t.Helper()
	review := &authenticationv1.SelfSubjectReview{}
	if err := env.Client.Create(w.t.Context(), review); err != nil {
		return err
	}
	patch := client.MergeFrom(plan.DeepCopy())
	plan.Spec.Approved, plan.Spec.ApprovedBy = ptr.To(true), review.Status.UserInfo.Username
	return env.Client.Patch(w.t.Context(), plan, patch)
}

// TestGuardSupersedesAPlanWhenTheInputsMove: a blocked plan the inputs no
// longer hash to is superseded, can no longer be approved, and the plan of
// the new inputs is the one an approval lets through.
func TestGuardSupersedesAPlanWhenTheInputsMove(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	w.setPodCIDR("10.1.0.0/16")
	first := w.waitBlocked(tc)
	w.setPodCIDR("10.2.0.0/16")
	w.eventually(2*time.Minute, "a new plan for the new inputs", func() (bool, error) {
		w.get(tc)
		return tc.Status.PendingPlanRef != nil && tc.Status.PendingPlanRef.Name != first.Name, nil
	})
	second := w.waitBlocked(tc)
	w.get(first)
	if first.Labels[infrav1.PlanPhaseLabel] != string(infrav1.PlanPhaseSuperseded) {
		t.Fatalf("the first plan is %q, want Superseded", first.Labels[infrav1.PlanPhaseLabel])
	}
	w.waitEvent(tc.Name, "PlanSuperseded")
	if err := w.tryApprove(first); err == nil || !strings.Contains(err.Error(), "can no longer be approved") {
		t.Fatalf("approving the superseded plan: %v, want a refusal", err)
	}
	w.approve(second)
	w.eventually(2*time.Minute, "the second plan applied", func() (bool, error) {
		w.get(second)
		return second.Labels[infrav1.PlanPhaseLabel] == string(infrav1.PlanPhaseApplied), nil
	})
	w.eventually(time.Minute, "no pending plan and ApplyJobSucceeded=True", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return tc.Status.PendingPlanRef == nil && c.Status == metav1.ConditionTrue, nil
	})
}

// TestManualPlansEveryApplyButTheFirst: a TerraformCluster with
// applyPolicy Manual applies its first inputs at once; later ones are
// planned by a plan Job: an empty plan applies without approval, any other
// waits as a Manual TerraformPlan until approved.
func TestManualPlansEveryApplyButTheFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.ApplyPolicy = infrav1.ApplyPolicyManual })
	w.waitProvisioned(tc)
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "plan")); n != 0 {
		t.Fatalf("%d plan Jobs before the first apply, want none: the first apply is not gated", n)
	}

	// The services CIDR changes nothing the module creates: an empty plan.
	w.update(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.cluster}}, func(o client.Object) {
		o.(*clusterv1.Cluster).Spec.ClusterNetwork.Services.CIDRBlocks = []string{"10.96.0.0/12"}
	})
	w.eventually(2*time.Minute, "the empty plan applied without approval", func() (bool, error) {
		return w.succeeded(state.KindCluster, tc.Name, "plan") == 1 && w.succeeded(state.KindCluster, tc.Name, "apply") == 2, nil
	})
	w.get(tc)
	if tc.Status.PendingPlanRef != nil {
		t.Errorf("an empty plan made TerraformPlan %s", tc.Status.PendingPlanRef.Name)
	}

	// The pods CIDR replaces resources: planned, then held for approval.
	w.setPodCIDR("10.3.0.0/16")
	plan := w.waitAwaitingApproval(tc)
	if plan.Spec.Reason != infrav1.PlanReasonManual || plan.Spec.Summary.Replace < 1 {
		t.Errorf("TerraformPlan %s: reason %s, summary %+v; want a Manual plan replacing the network", plan.Name, plan.Spec.Reason, plan.Spec.Summary)
	}
	if c := conditionOf(tc, infrav1.ApplyJobSucceededCondition); !strings.Contains(c.Message, plan.Name) || !strings.Contains(c.Message, "kubectl captf approve tfc/"+tc.Name) {
		t.Errorf("PlanAwaitingApproval message %q does not name the plan and the approve command", c.Message)
	}
	w.passOver(tc)
	if n := w.succeeded(state.KindCluster, tc.Name, "apply"); n != 2 {
		t.Fatalf("%d successful applies while the plan waits, want 2", n)
	}
	w.approve(plan)
	w.eventually(2*time.Minute, "the approved plan applied", func() (bool, error) {
		w.get(plan)
		return plan.Labels[infrav1.PlanPhaseLabel] == string(infrav1.PlanPhaseApplied), nil
	})
	var expected bool
	for _, j := range w.jobsOf(state.KindCluster, tc.Name, "apply") {
		expected = expected || strings.Contains(strings.Join(j.Spec.Template.Spec.Containers[0].Args, " "), "--expect-plan="+plan.Spec.PlanHash)
	}
	if !expected {
		t.Error("no apply Job ran with --expect-plan of the approved plan")
	}
}

// TestPoolExportsChangeIsGuarded: a pool whose members are replaced when
// the cluster's exports change (here: its network ID) stops before the
// replacement with an ExportsChange TerraformPlan; approving it lets
// exactly that change through.
func TestPoolExportsChangeIsGuarded(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	images := kubelet.ExampleImages(t)
	images["local/network-pool:tofu"] = kubelet.Image{Runtime: "tofu", ModuleDir: moduleFrom(t, "noop-machinepool", func(files map[string]string) {
		files["main.tf"] = strings.Replace(files["main.tf"], "var.captf_cluster_outputs.cluster_id", "var.captf_cluster_outputs.network_id", 1)
	})}
	kubelet.StartIn(t, env, w.ns, images)
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	tmp := w.newPool("pool", 1, "network-pool")
	w.waitProvisioned(tmp)

	// A new pod network replaces the cluster's network (approved), which
	// changes the exports the pool renders.
	w.setPodCIDR("10.9.0.0/16")
	w.approve(w.waitBlocked(tc))
	w.eventually(3*time.Minute, "the pool's apply blocked with an ExportsChange plan", func() (bool, error) {
		w.get(tmp)
		c := conditionOf(tmp, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.DestructivePlanBlockedReason && tmp.Status.PendingPlanRef != nil, nil
	})
	plan := &infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tmp.Status.PendingPlanRef.Name}}
	w.get(plan)
	if plan.Spec.Reason != infrav1.PlanReasonExportsChange || plan.Spec.TargetRef.Kind != "TerraformMachinePool" || plan.Spec.Summary.Replace < 1 {
		t.Errorf("TerraformPlan %s: reason %s, target %+v, summary %+v; want an ExportsChange plan replacing members", plan.Name, plan.Spec.Reason, plan.Spec.TargetRef, plan.Spec.Summary)
	}
	if c := conditionOf(tmp, infrav1.ApplyJobSucceededCondition); !strings.Contains(c.Message, "kubectl captf approve tfmp/pool") {
		t.Errorf("the pool's condition %q does not give the approve command", c.Message)
	}

	// While the change waits, a bootstrap data rotation applies at once,
	// rendering the exports of the last successful apply.
	record := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: records.AttemptName(state.KindMachinePool, "pool")}}
	w.eventually(time.Minute, "the held change recorded", func() (bool, error) {
		w.get(record)
		return strings.Contains(record.Annotations[infrav1.PendingClusterOutputsAnnotation], plan.Name), nil
	})
	appliedExports := record.Annotations[infrav1.AppliedClusterOutputsHashAnnotation]
	applies := w.succeeded(state.KindMachinePool, "pool", "apply")
	w.update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "pool-bootstrap"}}, func(o client.Object) {
		o.(*corev1.Secret).Data["value"] = []byte("#cloud-config\nruncmd: [rotated]\n")
	})
	w.annotate(tmp, "test.captf.io/poke", "rotated") // the next pass; nothing watches bootstrap Secrets
	w.eventually(2*time.Minute, "the rotation applied while the change waits", func() (bool, error) {
		return w.succeeded(state.KindMachinePool, "pool", "apply") > applies, nil
	})
	for _, j := range w.jobsOf(state.KindMachinePool, "pool", "apply") {
		if j.Status.Succeeded > 0 && j.Annotations[infrav1.PlanAnnotation] == "" && j.CreationTimestamp.After(plan.CreationTimestamp.Time) &&
			j.Annotations[infrav1.AppliedClusterOutputsHashAnnotation] != appliedExports {
			t.Errorf("rotation apply Job %s rendered exports %s, want the last applied %s", j.Name, j.Annotations[infrav1.AppliedClusterOutputsHashAnnotation], appliedExports)
		}
	}
	w.get(plan)
	if plan.Labels[infrav1.PlanPhaseLabel] != string(infrav1.PlanPhasePending) {
		t.Fatalf("the ExportsChange plan is %q after a rotation, want Pending", plan.Labels[infrav1.PlanPhaseLabel])
	}
	w.eventually(time.Minute, "the pool still reports the blocked change", func() (bool, error) {
		w.get(tmp)
		c, ready := conditionOf(tmp, infrav1.ApplyJobSucceededCondition), conditionOf(tmp, infrav1.ReadyCondition)
		return c.Reason == infrav1.DestructivePlanBlockedReason && ready.Status == metav1.ConditionFalse, nil
	})
	w.approve(plan)
	w.eventually(3*time.Minute, "the pool applied the approved exports change", func() (bool, error) {
		w.get(plan)
		return plan.Labels[infrav1.PlanPhaseLabel] == string(infrav1.PlanPhaseApplied), nil
	})
	w.eventually(time.Minute, "the pool is Ready again", func() (bool, error) {
		w.get(tmp)
		c := conditionOf(tmp, infrav1.ReadyCondition)
		return c != nil && c.Status == metav1.ConditionTrue && tmp.Status.PendingPlanRef == nil, nil
	})
	w.get(record)
	if v, held := record.Annotations[infrav1.PendingClusterOutputsAnnotation]; held || record.Annotations[infrav1.AppliedClusterOutputsHashAnnotation] == appliedExports {
		t.Errorf("after the approved apply: pending-cluster-outputs %q, applied exports still %s", v, appliedExports)
	}
}
