package lifecycle_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// fileModule is the noop cluster module plus a file at an absolute path of
// the test host. The Jobs run in-process on this host, so the file
// outlives each Job: a real resource the test can delete or break behind
// the module's back, between two Jobs.
func fileModule(t *testing.T, path string) string {
	return moduleFrom(t, "noop-cluster", func(files map[string]string) {
		files["world.tf"] = fmt.Sprintf("resource \"local_file\" \"world\" {\n  filename = %q\n  content  = \"present\"\n}\n", path)
	})
}

// wantFile checks whether the module's file exists on the host (a link
// to nowhere counts as absent).
func (w *world) wantFile(path string, exists bool) {
	w.t.Helper()
	_, err := os.Stat(path)
	switch {
	case exists && err != nil:
		w.t.Fatalf("the module's file %s: %v, want it created", path, err)
	case !exists && err == nil:
		w.t.Fatalf("the module's file %s exists, want it absent: something applied", path)
	case !exists && !errors.Is(err, fs.ErrNotExist):
		w.t.Fatal(err)
	}
}

// waitWarning waits until a Warning event of reason regards the object
// name.
func (w *world) waitWarning(name, reason string) {
	w.t.Helper()
	w.eventually(2*time.Minute, "Warning event "+reason+" on "+name, func() (bool, error) {
		for _, ev := range w.eventWarnings(name) {
			if ev[0] == reason {
				return true, nil
			}
		}
		return false, nil
	})
}

// waitPlanApply waits until the apply Job that runs the approved plan is
// bookkept and returns it.
func (w *world) waitPlanApply(tc *infrav1.TerraformCluster, plan *infrav1.TerraformPlan) batchv1.Job {
	w.t.Helper()
	var job batchv1.Job
	w.eventually(2*time.Minute, "the apply of TerraformPlan "+plan.Name+" bookkept", func() (bool, error) {
		for _, j := range w.jobsOf(state.KindCluster, tc.Name, "apply") {
			if j.Annotations[infrav1.PlanAnnotation] == plan.Name && j.Annotations[infrav1.BookkeptAnnotation] == "true" {
				job = j
				return true, nil
			}
		}
		return false, nil
	})
	return job
}

// TestApprovedPlanChangedIsPlannedAgain: when the world moves between the
// approval of a destructive plan and its apply, the approved apply applies
// nothing — the plan fails with PlanChanged — and the next guarded apply
// blocks again with a new plan of what is now to do; approving that one
// applies it, and the failed plan stays failed.
func TestApprovedPlanChangedIsPlannedAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	file := filepath.Join(t.TempDir(), "world")
	images := kubelet.ExampleImages(t)
	images["local/world:tofu"] = kubelet.Image{ModuleDir: fileModule(t, file), Runtime: "tofu"}
	kubelet.StartIn(t, env, w.ns, images)
	w.checkStatuses()
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.Source.Image = "local/world:tofu" })
	w.waitProvisioned(tc)
	w.wantFile(file, true)

	// A new pod network replaces the network: the guard stops the apply.
	w.setPodCIDR("10.1.0.0/16")
	first := w.waitBlocked(tc)
	if s := first.Spec.Summary; s.Replace < 1 || s.Create != 0 {
		t.Errorf("TerraformPlan %s summary %+v, want replacements only", first.Name, s)
	}

	// The world moves before the approval is acted on: the file is gone,
	// so a fresh plan also creates it, which is not what was approved.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	w.approve(first)
	changed := w.waitPlanApply(tc, first)
	if changed.Annotations[infrav1.PlanChangedAnnotation] != "true" {
		t.Fatalf("the apply Job %s of the approved plan is not annotated %s (annotations %v)", changed.Name, infrav1.PlanChangedAnnotation, changed.Annotations)
	}
	w.get(first)
	if phase := first.Labels[infrav1.PlanPhaseLabel]; phase != string(infrav1.PlanPhaseFailed) {
		t.Fatalf("TerraformPlan %s is %q after its plan changed, want Failed", first.Name, phase)
	}
	w.waitWarning(tc.Name, "PlanChanged")
	// Nothing was applied: the file was not created again, and the new
	// inputs are not the applied ones.
	w.wantFile(file, false)
	w.get(tc)
	if c := conditionOf(tc, infrav1.InputsAppliedCondition); c == nil || c.Status == metav1.ConditionTrue {
		t.Errorf("InputsApplied = %+v after a plan-changed apply, want the new inputs not applied", c)
	}

	// The next guarded apply plans again and blocks with a new plan that
	// also creates the file.
	w.eventually(2*time.Minute, "a new plan to approve", func() (bool, error) {
		w.get(tc)
		return tc.Status.PendingPlanRef != nil && tc.Status.PendingPlanRef.Name != first.Name, nil
	})
	second := w.waitBlocked(tc)
	if s := second.Spec.Summary; s.Replace < 1 || s.Create < 1 {
		t.Errorf("TerraformPlan %s summary %+v, want the replacements and the file's creation", second.Name, s)
	}
	w.wantFile(file, false)

	w.approve(second)
	applied := w.waitPlanApply(tc, second)
	if applied.Status.Succeeded == 0 {
		t.Fatalf("the apply Job %s of the second plan did not succeed (annotations %v)", applied.Name, applied.Annotations)
	}
	w.eventually(time.Minute, "the second plan Applied", func() (bool, error) {
		w.get(second)
		return second.Labels[infrav1.PlanPhaseLabel] == string(infrav1.PlanPhaseApplied), nil
	})
	w.eventually(time.Minute, "no pending plan, ApplyJobSucceeded=True and the inputs applied", func() (bool, error) {
		w.get(tc)
		c, in := conditionOf(tc, infrav1.ApplyJobSucceededCondition), conditionOf(tc, infrav1.InputsAppliedCondition)
		return tc.Status.PendingPlanRef == nil && c.Status == metav1.ConditionTrue && in != nil && in.Status == metav1.ConditionTrue, nil
	})
	w.wantFile(file, true)
	w.get(first)
	if phase := first.Labels[infrav1.PlanPhaseLabel]; phase != string(infrav1.PlanPhaseFailed) {
		t.Errorf("TerraformPlan %s is %q after the second plan applied, want it still Failed", first.Name, phase)
	}
}
