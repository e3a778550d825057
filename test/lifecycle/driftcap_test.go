package lifecycle_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// jobEnd is when a finished Job ended and whether it succeeded.
func jobEnd(j batchv1.Job) (end time.Time, finished, succeeded bool) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return c.LastTransitionTime.Time, true, true
		case batchv1.JobFailed:
			return c.LastTransitionTime.Time, true, false
		}
	}
	return time.Time{}, false, false
}

// remediations lists the cluster's remediation applies, oldest first.
func (w *world) remediations(tc *infrav1.TerraformCluster) []batchv1.Job {
	w.t.Helper()
	jobs := slices.DeleteFunc(w.jobsOf(state.KindCluster, tc.Name, "apply"), func(j batchv1.Job) bool {
		return j.Annotations[infrav1.DriftRemediationAnnotation] != "true"
	})
	slices.SortFunc(jobs, func(a, b batchv1.Job) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return jobs
}

// bookkept: the Job finished and the manager recorded its result.
func bookkept(j batchv1.Job) bool {
	_, finished, _ := jobEnd(j)
	return finished && j.Annotations[infrav1.BookkeptAnnotation] == "true"
}

// TestDriftRemediationStopsAtTheCap: a remediation that cannot remove the
// drift is retried after its backoff until failedJobsHistoryLimit
// remediations failed; then the next Job is a drift check, not a third
// apply, and DriftDetected stays True while the apply backoff holds.
func TestDriftRemediationStopsAtTheCap(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	dir := t.TempDir()
	file := filepath.Join(dir, "world")
	images := kubelet.ExampleImages(t)
	images["local/world:tofu"] = kubelet.Image{ModuleDir: fileModule(t, file), Runtime: "tofu"}
	kubelet.StartIn(t, env, w.ns, images)
	w.checkStatuses()
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) {
		tc.Spec.Source.Image = "local/world:tofu"
		tc.Spec.Drift = &infrav1.ClusterDriftSpec{IntervalSeconds: ptr.To[int32](5), Action: infrav1.DriftActionRemediate}
		tc.Spec.Jobs = &infrav1.JobsSpec{FailedJobsHistoryLimit: ptr.To[int32](2)}
	})
	w.waitProvisioned(tc)
	w.wantFile(file, true)

	// The world moves so that the module can no longer create its file:
	// the file is gone and its path is a link into a directory that does
	// not exist. A drift check finds the file missing; re-creating it
	// fails, without leaving anything in the state (a failed provisioner
	// would taint it, and the guard would then stop the retry before its
	// replacement instead of letting it fail).
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone", "world"), file); err != nil {
		t.Fatal(err)
	}
	// A drift check has to run first: on a loaded machine that takes
	// longer than an event's wait.
	w.eventually(2*time.Minute, "DriftDetected=True", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.DriftDetectedCondition)
		return c != nil && c.Status == metav1.ConditionTrue, nil
	})
	w.waitWarning(tc.Name, "DriftDetected")
	w.waitEvent(tc.Name, "DriftRemediationStarted")

	// Two remediations fail, the second one after the backoff of the first.
	var rems []batchv1.Job
	w.eventually(4*time.Minute, "two failed remediation applies", func() (bool, error) {
		rems = w.remediations(tc)
		for _, j := range rems {
			if _, finished, ok := jobEnd(j); finished && ok {
				t.Fatalf("remediation apply %s succeeded although its file cannot be written", j.Name)
			}
		}
		return len(rems) >= 2 && bookkept(rems[0]) && bookkept(rems[1]), nil
	})
	firstEnd, _, _ := jobEnd(rems[0])
	if gap := rems[1].CreationTimestamp.Sub(firstEnd); gap < retryBase-time.Second {
		t.Errorf("the second remediation %s started %s after the first failed, want its %s backoff", rems[1].Name, gap, retryBase)
	}
	capped, _, _ := jobEnd(rems[1])
	w.get(tc)
	if c := conditionOf(tc, infrav1.ApplyJobSucceededCondition); c.Reason != infrav1.ApplyFailedReason || !strings.Contains(c.Message, rems[1].Name) {
		t.Errorf("ApplyJobSucceeded = %+v, want ApplyFailed naming %s", c, rems[1].Name)
	}

	// At the cap the next Job is a drift check, not a third remediation.
	var check batchv1.Job
	w.eventually(2*time.Minute, "a drift check after the second remediation", func() (bool, error) {
		for _, j := range w.jobsOf(state.KindCluster, tc.Name, "") {
			if j.CreationTimestamp.Time.Before(capped) {
				continue
			}
			if op := j.Labels[infrav1.OperationLabel]; op != "drift" {
				t.Fatalf("Job %s (%s) started after the second failed remediation, want a drift check", j.Name, op)
			}
			if bookkept(j) {
				check = j
				return true, nil
			}
		}
		return false, nil
	})
	if _, _, ok := jobEnd(check); !ok {
		t.Fatalf("the drift check %s failed", check.Name)
	}
	if rems = w.remediations(tc); len(rems) != 2 {
		t.Fatalf("%d remediation applies once the drift check %s finished, want 2: the cap is failedJobsHistoryLimit", len(rems), check.Name)
	}
	// The drift check found the drift again: a remediation is due, but it
	// waits out the backoff of the failed applies, and says so.
	w.eventually(time.Minute, "DriftDetected telling the backoff", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.DriftDetectedCondition)
		return c != nil && strings.Contains(c.Message, "waits out the backoff"), nil
	})
	c := conditionOf(tc, infrav1.DriftDetectedCondition)
	if c.Status != metav1.ConditionTrue || c.Reason != infrav1.DriftPendingReason {
		t.Fatalf("DriftDetected = %+v after the capped remediations, want True/DriftPending", c)
	}
	if !strings.Contains(c.Message, "1 to create") || !strings.Contains(c.Message, "local_file.world") {
		t.Errorf("DriftDetected message %q does not count and name the drifted resource", c.Message)
	}
	if ready := conditionOf(tc, infrav1.ReadyCondition); ready.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v: drift and a failed remediation never make a provisioned cluster not Ready", ready)
	}
	w.wantFile(file, false)
}
