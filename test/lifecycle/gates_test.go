package lifecycle_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// brokenModule is a cluster module that references an undeclared
// variable: validate fails.
func brokenModule(t *testing.T) string {
	return moduleFrom(t, "noop-cluster", func(files map[string]string) {
		for name := range files {
			if name != "variables.tf" {
				delete(files, name)
			}
		}
		files["main.tf"] = "output \"health\" {\n  value = var.does_not_exist\n}\n"
	})
}

// TestFailedApplyBacksOff: a failing apply reports the runner's summary
// and is not retried before its backoff.
func TestFailedApplyBacksOff(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	images := kubelet.ExampleImages(t)
	images["local/broken:tofu"] = kubelet.Image{ModuleDir: brokenModule(t), Runtime: "tofu"}
	kubelet.StartIn(t, env, w.ns, images)
	w.checkStatuses()
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.Source.Image = "local/broken:tofu" })
	w.eventually(2*time.Minute, "the apply failed", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.ApplyFailedReason, nil
	})
	c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
	if !strings.Contains(c.Message, "step validate: ") || !strings.Contains(c.Message, "Reference to undeclared input variable") {
		t.Errorf("ApplyJobSucceeded message %q does not say what failed", c.Message)
	}
	if lr := tc.Status.LastRun; lr == nil || lr.Error == nil || lr.Error.Step != "validate" {
		t.Errorf("status.lastRun = %+v, want the validate step's error", lr)
	}
	if ready := conditionOf(tc, infrav1.ReadyCondition); ready.Status != metav1.ConditionFalse {
		t.Errorf("Ready = %+v, want False while the first apply fails", ready)
	}
	// The pass that reported the failure says the inputs wait for a retry.
	if c := conditionOf(tc, infrav1.InputsAppliedCondition); c == nil || c.Reason != infrav1.InputsApplyFailedReason {
		t.Errorf("InputsApplied = %+v after the failure, want InputsApplyFailed", c)
	}
	end, _, _ := jobEnd(w.jobsOf(state.KindCluster, tc.Name, "apply")[0])
	// The retry comes once the backoff is over, not before.
	w.eventually(2*retryBase+time.Minute, "the retry", func() (bool, error) {
		return len(w.jobsOf(state.KindCluster, tc.Name, "apply")) >= 2, nil
	})
	retries := w.jobsOf(state.KindCluster, tc.Name, "apply")
	slices.SortFunc(retries, func(a, b batchv1.Job) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	if gap := retries[1].CreationTimestamp.Sub(end); gap < retryBase-time.Second {
		t.Errorf("the retry started %s after the failure, want its %s backoff", gap, retryBase)
	}
	// Exactly one JobFailed event per failed, bookkept Job: read together
	// until they agree, so that a Job failing between the reads is no
	// miscount; a duplicate event never lets them agree.
	w.eventually(time.Minute, "one JobFailed event per failed Job", func() (bool, error) {
		failedJobs := 0
		for _, j := range w.jobsOf(state.KindCluster, tc.Name, "apply") {
			if _, finished, ok := jobEnd(j); finished && !ok && bookkept(j) {
				failedJobs++
			}
		}
		events := 0
		for _, r := range w.events(tc.Name) {
			if r == "JobFailed" {
				events++
			}
		}
		return failedJobs >= 2 && events == failedJobs, nil
	})
}

// TestPauseStartsNothing: a paused object starts no Job until unpaused.
func TestPauseStartsNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) {
		tc.Annotations = map[string]string{infrav1.PausedAnnotation: ""}
	})
	w.eventually(time.Minute, "Paused reported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.PausedCondition)
		return c != nil && c.Status == metav1.ConditionTrue, nil
	})
	w.passOver(tc)
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "")); n != 0 {
		t.Fatalf("a paused TerraformCluster started %d Jobs", n)
	}
	w.update(tc, func(o client.Object) { delete(o.GetAnnotations(), infrav1.PausedAnnotation) })
	w.waitProvisioned(tc)
	if c := conditionOf(tc, infrav1.PausedCondition); c.Status != metav1.ConditionFalse {
		t.Errorf("Paused = %+v after unpausing", c)
	}
}

// TestUnpullableImage: a module image the node cannot pull is reported
// as ImagePullFailed, as a user would see it from the pod.
func TestUnpullableImage(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.Source.Image = "local/no-such-module:tofu" })
	w.eventually(2*time.Minute, "ImagePullFailed reported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.ImagePullFailedReason, nil
	})
	if c := conditionOf(tc, infrav1.ApplyJobSucceededCondition); !strings.Contains(c.Message, "local/no-such-module:tofu") {
		t.Errorf("ImagePullFailed message %q does not name the image", c.Message)
	}
	// After the grace the Job is stopped; the first apply left no state,
	// and nothing provisions while it backs off.
	w.eventually(2*time.Minute, "the Job stopped for its image", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return tc.Status.ActiveJob == nil && c != nil && c.Reason == infrav1.ImagePullFailedReason && strings.Contains(c.Message, "so the Job was stopped"), nil
	})
	if c := conditionOf(tc, infrav1.InfrastructureHealthyCondition); c == nil || c.Reason != infrav1.WaitingForProvisioningReason {
		t.Errorf("InfrastructureHealthy = %+v once the first apply was stopped, want WaitingForProvisioning, not Provisioning", c)
	}
}

// TestImagePushedLateRuns: an apply whose module image cannot be pulled
// says so at once; once the image is pushed (within the grace), the
// kubelet pulls it at its next try and the Job runs, and the machine no
// longer says it cannot pull its image while its apply runs: its
// condition says again what it said before (no apply yet).
func TestImagePushedLateRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	k := kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	w.waitProvisioned(w.newCluster(nil))
	tm := w.newMachine("late-0", "late")
	w.eventually(time.Minute, "ImagePullFailed reported", func() (bool, error) {
		w.get(tm)
		c := conditionOf(tm, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.ImagePullFailedReason, nil
	})
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The slow module: its apply runs 45 s, long enough to be seen running.
	k.Push(t, env, kubelet.ExampleImage("late", "tofu"), kubelet.Image{ModuleDir: filepath.Join(root, "examples", "modules", "slow"), Runtime: "tofu"})
	w.eventually(time.Minute, "the apply runs, no longer reported as an image that cannot be pulled", func() (bool, error) {
		w.get(tm)
		c := conditionOf(tm, infrav1.ApplyJobSucceededCondition)
		return tm.Status.ActiveJob != nil && c != nil && c.Reason != infrav1.ImagePullFailedReason, nil
	})
	if c := conditionOf(tm, infrav1.ApplyJobSucceededCondition); c.Reason != infrav1.NoApplyYetReason {
		t.Errorf("ApplyJobSucceeded = %s/%s (%s) while the first apply runs, want Unknown/NoApplyYet as before the pull failed", c.Status, c.Reason, c.Message)
	}
	for _, j := range w.jobsOf(state.KindMachine, tm.Name, "") {
		if j.Annotations[infrav1.ImagePullFailedAnnotation] != "" {
			t.Errorf("Job %s was stopped for its image, which came within the grace", j.Name)
		}
	}
}

// TestJobSlots: with a cluster limit of one running Job, a pool waits
// for the slot a slow machine holds, then provisions.
func TestJobSlots(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.MaxActiveJobs = ptr.To[int32](1) })
	w.waitProvisioned(tc)
	// A cluster nobody deletes carries DeletionBlocked=False/NotBlocked.
	if c := conditionOf(tc, infrav1.DeletionBlockedCondition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != infrav1.NotBlockedReason {
		t.Errorf("DeletionBlocked of a provisioned TerraformCluster = %+v, want False/NotBlocked", c)
	}
	tm := w.newMachine("slow-0", "slow")
	w.eventually(time.Minute, "the slow machine's apply runs", func() (bool, error) {
		w.get(tm)
		return tm.Status.ActiveJob != nil, nil
	})
	tmp := w.newPool("pool", 1)
	w.eventually(time.Minute, "the pool waits for a Job slot", func() (bool, error) {
		w.get(tmp)
		c := conditionOf(tmp, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.WaitingForJobSlotReason, nil
	})
	if n := len(w.jobsOf(state.KindMachinePool, tmp.Name, "")); n != 0 {
		t.Errorf("the pool started %d Jobs while the cluster's only slot was taken", n)
	}
	w.waitProvisioned(tm)
	// Once its Job runs, the pool no longer says it waits for a slot.
	w.eventually(2*time.Minute, "the pool's apply runs or ran", func() (bool, error) {
		w.get(tmp)
		return tmp.Status.ActiveJob != nil || conditionOf(tmp, infrav1.ApplyJobSucceededCondition).Reason != infrav1.WaitingForJobSlotReason, nil
	})
	if c := conditionOf(tmp, infrav1.ApplyJobSucceededCondition); c.Reason == infrav1.WaitingForJobSlotReason {
		t.Errorf("ApplyJobSucceeded = %s/%s (%s) while the pool's Job %s runs: the wait outlived it", c.Status, c.Reason, c.Message, tmp.Status.ActiveJob.Name)
	}
	w.waitProvisioned(tmp)
	waits := 0
	for _, r := range w.events(tmp.Name) {
		if r == infrav1.WaitingForJobSlotReason {
			waits++
		}
	}
	if waits != 1 {
		t.Errorf("%d WaitingForJobSlot events for one wait, want 1", waits)
	}
}

// TestClusterOperationGate: a cluster's apply waits while one of its
// machines applies, then runs.
func TestClusterOperationGate(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	tm := w.newMachine("slow-0", "slow")
	w.eventually(time.Minute, "the slow machine's apply runs", func() (bool, error) {
		w.get(tm)
		return tm.Status.ActiveJob != nil, nil
	})
	w.setPodCIDR("10.244.0.0/16")
	w.eventually(time.Minute, "the cluster waits for the machine", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.WaitingForMachineOperationsReason, nil
	})
	if c := conditionOf(tc, infrav1.ApplyJobSucceededCondition); !strings.Contains(c.Message, "captf-m-slow-0-apply-") {
		t.Errorf("WaitingForMachineOperations message %q does not name the machine's Job", c.Message)
	}
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "apply")); n != 1 {
		t.Errorf("the cluster started its apply while a machine applied (%d apply Jobs)", n)
	}
	w.waitProvisioned(tm)
	// The new network replaces a resource: the guard stops the cluster's
	// apply, and the approval lets it through.
	w.approve(w.waitBlocked(tc))
	w.eventually(2*time.Minute, "the cluster's apply ran after the machine's", func() (bool, error) {
		return w.succeeded(state.KindCluster, tc.Name, "apply") == 2, nil
	})
}
