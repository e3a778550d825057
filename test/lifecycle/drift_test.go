package lifecycle_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// driftingModule is the noop cluster module plus a file in the run's
// working directory: every Job runs in a fresh pod, so each drift check
// finds the file gone, as a real resource deleted behind the module's
// back would be.
func driftingModule(t *testing.T) string {
	return moduleFrom(t, "noop-cluster", func(files map[string]string) {
		files["drift.tf"] = "resource \"local_file\" \"probe\" {\n  filename = \"${path.cwd}/drift-probe\"\n  content  = \"present\"\n}\n"
	})
}

// TestDriftReportedThenRemediated: a TerraformCluster whose resource
// vanishes between runs reports the drift (Report changes nothing), then,
// switched to Remediate, re-applies its inputs, which resolves it.
func TestDriftReportedThenRemediated(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	images := kubelet.ExampleImages(t)
	images["local/drifting:tofu"] = kubelet.Image{ModuleDir: driftingModule(t), Runtime: "tofu"}
	kubelet.StartIn(t, env, w.ns, images)
	w.checkStatuses()
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) {
		tc.Spec.Source.Image = "local/drifting:tofu"
		tc.Spec.Drift = &infrav1.ClusterDriftSpec{IntervalSeconds: ptr.To[int32](5), Action: infrav1.DriftActionReport}
	})
	w.waitProvisioned(tc)
	w.eventually(2*time.Minute, "DriftDetected=True/DriftReported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.DriftDetectedCondition)
		return c != nil && c.Reason == infrav1.DriftReportedReason, nil
	})
	c := conditionOf(tc, infrav1.DriftDetectedCondition)
	if !strings.Contains(c.Message, "1 to create") || !strings.Contains(c.Message, "local_file.probe") {
		t.Errorf("DriftDetected message %q does not count and name the drifted resource", c.Message)
	}
	if ready := conditionOf(tc, infrav1.ReadyCondition); ready.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v: drift never feeds Ready", ready)
	}
	w.waitEvent(tc.Name, "DriftDetected")
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "apply")); n != 1 {
		t.Fatalf("%d apply Jobs under drift.action Report, want the first only", n)
	}

	w.update(tc, func(o client.Object) {
		o.(*infrav1.TerraformCluster).Spec.Drift.Action = infrav1.DriftActionRemediate
	})
	w.waitEvent(tc.Name, "DriftRemediationStarted")
	w.waitEvent(tc.Name, "DriftResolved")
	remediations := slices.DeleteFunc(w.jobsOf(state.KindCluster, tc.Name, "apply"), func(j batchv1.Job) bool {
		return j.Annotations[infrav1.DriftRemediationAnnotation] != "true"
	})
	if len(remediations) == 0 {
		t.Fatal("no apply Job marked captf.io/drift-remediation")
	}
}
