package lifecycle_test

import (
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
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestApplyPolicyChangeSupersedesTheManualPlan: a Manual plan waiting for
// approval is moot once the cluster's applyPolicy is Automatic again: it
// is superseded, and the destructive guard takes over with a plan of its
// own. An approval given while the cluster is paused is recorded at once
// but applies only after the pause.
func TestApplyPolicyChangeSupersedesTheManualPlan(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.ApplyPolicy = infrav1.ApplyPolicyManual })
	w.waitProvisioned(tc)
	w.setPodCIDR("10.4.0.0/16")
	manual := w.waitAwaitingApproval(tc)

	w.update(tc, func(o client.Object) { o.(*infrav1.TerraformCluster).Spec.ApplyPolicy = infrav1.ApplyPolicyAutomatic })
	guarded := w.waitBlocked(tc)
	w.get(manual)
	if manual.Labels[infrav1.PlanPhaseLabel] != string(infrav1.PlanPhaseSuperseded) {
		t.Fatalf("the Manual plan is %q after the switch to Automatic, want Superseded", manual.Labels[infrav1.PlanPhaseLabel])
	}
	superseded := false
	for _, ev := range w.eventNotes(tc.Name) {
		superseded = superseded || ev[0] == "PlanSuperseded" && strings.Contains(ev[1], manual.Name) && strings.Contains(ev[1], "applyPolicy")
	}
	if !superseded {
		t.Errorf("no PlanSuperseded event says the applyPolicy made %s moot; events: %q", manual.Name, w.eventNotes(tc.Name))
	}

	w.pauseCluster(tc, true)
	applies := len(w.jobsOf(state.KindCluster, tc.Name, "apply"))
	w.approve(guarded)
	w.waitEvent(tc.Name, "PlanApproved")
	w.get(guarded)
	if guarded.Labels[infrav1.PlanPhaseLabel] != string(infrav1.PlanPhaseApproved) {
		t.Errorf("the approved plan is %q while the cluster is paused, want Approved", guarded.Labels[infrav1.PlanPhaseLabel])
	}
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "apply")); n != applies {
		t.Fatalf("%d apply Jobs started while the cluster is paused", n-applies)
	}
	w.pauseCluster(tc, false)
	w.eventually(2*time.Minute, "the approved plan applied after the pause", func() (bool, error) {
		w.get(guarded)
		return guarded.Labels[infrav1.PlanPhaseLabel] == string(infrav1.PlanPhaseApplied), nil
	})
}

// TestRevertedInputsWithdrawTheBlock: when the inputs of a blocked apply
// go back to the applied ones, nothing waits any more: the plan is
// superseded and the cluster reports its last successful apply again
// (Ready), naming the withdrawn Job.
// A manager that superseded the plan but died before writing the status
// leaves the block reported: the next pass reports the withdrawal then.
func TestRevertedInputsWithdrawTheBlock(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.cluster}}
	w.get(cluster)
	applied := cluster.Spec.ClusterNetwork.Pods.CIDRBlocks
	w.setPodCIDR("10.5.0.0/16")
	plan := w.waitBlocked(tc)
	w.setPodCIDR(applied...)
	w.eventually(2*time.Minute, "the block withdrawn", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return c.Status == metav1.ConditionTrue && tc.Status.PendingPlanRef == nil, nil
	})
	if c := conditionOf(tc, infrav1.ApplyJobSucceededCondition); !strings.Contains(c.Message, "withdrawn") || !strings.Contains(c.Message, plan.Name) {
		t.Errorf("ApplyJobSucceeded message %q does not say the change of %s was withdrawn", c.Message, plan.Name)
	}
	if ready := conditionOf(tc, infrav1.ReadyCondition); ready.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v after the block was withdrawn", ready)
	}
	w.get(plan)
	if plan.Labels[infrav1.PlanPhaseLabel] != string(infrav1.PlanPhaseSuperseded) {
		t.Errorf("the withdrawn plan is %q, want Superseded", plan.Labels[infrav1.PlanPhaseLabel])
	}
	// The status a manager killed after the supersession never wrote.
	lost := tc.DeepCopy()
	meta.SetStatusCondition(&lost.Status.Conditions, metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionFalse,
		Reason: infrav1.DestructivePlanBlockedReason, Message: "TerraformPlan " + plan.Name + " waits for approval", ObservedGeneration: tc.Generation})
	lost.Status.PendingPlanRef = &infrav1.PlanReference{Name: plan.Name}
	if err := env.Client.Status().Patch(t.Context(), lost, client.MergeFrom(tc)); err != nil {
		t.Fatal(err)
	}
	w.eventually(2*time.Minute, "the withdrawal reported again", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "withdrawn") && tc.Status.PendingPlanRef == nil, nil
	})
	if n := w.succeeded(state.KindCluster, tc.Name, "apply"); n != 1 {
		t.Errorf("%d successful applies, want the first only: the withdrawn change applied nothing", n)
	}

	// The same change again is guarded again, with a new plan.
	w.setPodCIDR("10.5.0.0/16")
	w.eventually(2*time.Minute, "a new plan for the change made again", func() (bool, error) {
		w.get(tc)
		return tc.Status.PendingPlanRef != nil && tc.Status.PendingPlanRef.Name != plan.Name, nil
	})
	w.approve(w.waitBlocked(tc))
	w.eventually(2*time.Minute, "the change applied", func() (bool, error) {
		return w.succeeded(state.KindCluster, tc.Name, "apply") == 2, nil
	})
}

// TestApprovedPlanSupersededWhenTheInputsMove: a plan approved while the
// cluster is paused, whose inputs then change before its apply could run,
// is superseded with a Warning once the cluster is unpaused; its approval
// is ignored, and the new inputs are guarded again with a plan of their
// own.
func TestApprovedPlanSupersededWhenTheInputsMove(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	w.setPodCIDR("10.6.0.0/16")
	approved := w.waitBlocked(tc)
	w.pauseCluster(tc, true)
	w.approve(approved)
	w.waitEvent(tc.Name, "PlanApproved")
	w.updateCluster(func(c *clusterv1.Cluster) {
		c.Spec.ClusterNetwork.Pods.CIDRBlocks, c.Spec.Paused = []string{"10.7.0.0/16"}, nil
	})
	w.eventually(2*time.Minute, "a plan of the new inputs", func() (bool, error) {
		w.get(tc)
		return tc.Status.PendingPlanRef != nil && tc.Status.PendingPlanRef.Name != approved.Name, nil
	})
	w.waitBlocked(tc)
	w.get(approved)
	if approved.Labels[infrav1.PlanPhaseLabel] != string(infrav1.PlanPhaseSuperseded) {
		t.Fatalf("the approved plan of the old inputs is %q, want Superseded", approved.Labels[infrav1.PlanPhaseLabel])
	}
	if c := conditionOf(approved, infrav1.ApprovedCondition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != infrav1.PlanApprovalIgnoredReason {
		t.Errorf("Approved condition of the superseded plan = %+v, want False/ApprovalIgnored", c)
	}
	warned := false
	for _, ev := range w.eventWarnings(tc.Name) {
		warned = warned || ev[0] == "PlanSuperseded" && strings.Contains(ev[1], approved.Name)
	}
	if !warned {
		t.Errorf("no Warning PlanSuperseded for the approved plan %s", approved.Name)
	}
	for _, j := range w.jobsOf(state.KindCluster, tc.Name, "apply") {
		if j.Annotations[infrav1.PlanAnnotation] == approved.Name {
			t.Errorf("apply Job %s ran the superseded plan", j.Name)
		}
	}
}

// TestBlockedApplyOutlivesItsJob: the live plan holds a blocked apply,
// not the blocked Job: once that Job is gone (clusterctl move moves plans
// but not Jobs), no new guarded apply runs, the cluster still names the
// plan to approve, and approving it applies.
func TestBlockedApplyOutlivesItsJob(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	w.setPodCIDR("10.8.0.0/16")
	plan := w.waitBlocked(tc)
	// The Job carries its blocked mark once the status that reports the
	// block is written: wait for it, or there is nothing to delete yet.
	var blocked []batchv1.Job
	w.eventually(time.Minute, "the blocked Job marked", func() (bool, error) {
		blocked = slices.DeleteFunc(w.jobsOf(state.KindCluster, tc.Name, "apply"), func(j batchv1.Job) bool {
			return j.Annotations[infrav1.DestructivePlanBlockedAnnotation] != "true"
		})
		return len(blocked) > 0, nil
	})
	for _, j := range blocked {
		if err := env.Client.Delete(t.Context(), &j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
	}
	// The manager bookkeeps the Job before it lets it go, and the garbage
	// collector deletes its pod: over a minute on a loaded run.
	w.eventually(3*time.Minute, "the blocked Job gone", func() (bool, error) {
		for _, j := range w.jobsOf(state.KindCluster, tc.Name, "apply") {
			if j.Annotations[infrav1.DestructivePlanBlockedAnnotation] == "true" {
				return false, nil
			}
		}
		return true, nil
	})
	applies := len(w.jobsOf(state.KindCluster, tc.Name, "apply"))
	w.passOver(tc)
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "apply")); n != applies {
		t.Fatalf("%d apply Jobs started once the blocked Job was gone, want none: the plan still waits", n-applies)
	}
	c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
	if c.Reason != infrav1.DestructivePlanBlockedReason || !strings.HasPrefix(c.Message, "TerraformPlan "+plan.Name) || tc.Status.PendingPlanRef == nil || tc.Status.PendingPlanRef.Name != plan.Name {
		t.Errorf("ApplyJobSucceeded = %+v, pendingPlanRef %+v; want the block naming %s", c, tc.Status.PendingPlanRef, plan.Name)
	}
	w.approve(plan)
	w.eventually(2*time.Minute, "the plan applied", func() (bool, error) {
		w.get(plan)
		return plan.Labels[infrav1.PlanPhaseLabel] == string(infrav1.PlanPhaseApplied), nil
	})
}
