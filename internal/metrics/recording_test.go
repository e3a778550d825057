package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/plan"
	"captf.io/captf/internal/runner/result"
)

func TestStepLabel(t *testing.T) {
	testCases := []struct{ step, want string }{
		{"init", "init"}, {"force-unlock", "force-unlock"}, {"validate", "validate"}, {"plan", "plan"},
		{"show-json", "show-json"}, {"apply", "apply"}, {"apply-refresh-only", "apply-refresh-only"},
		{"destroy", "destroy"}, {"state-push", "state-push"}, {"state-list", "state-list"}, {"prepare", "prepare"},
		{"", "none"}, {"none", "none"}, {"import", "other"}, {"Apply", "other"},
	}
	for _, tc := range testCases {
		if got := metrics.StepLabel(tc.step); got != tc.want {
			t.Errorf("StepLabel(%q) = %q, want %q", tc.step, got, tc.want)
		}
	}
}

func TestJobErrorsKeepTheStepLabelBounded(t *testing.T) {
	before := testutil.ToFloat64(metrics.JobErrors.WithLabelValues("TerraformCluster", "plan", "deadline", "none"))
	metrics.ObserveJobError("TerraformCluster", "plan", metrics.ErrorKindDeadline, "")
	if got := testutil.ToFloat64(metrics.JobErrors.WithLabelValues("TerraformCluster", "plan", "deadline", "none")); got != before+1 {
		t.Errorf("a deadline without a failed step counts under step none: %v, want %v", got, before+1)
	}
	metrics.ObserveStep("TerraformCluster", "plan", "my-custom-step", 2)
	if n := testutil.CollectAndCount(metrics.JobStepDuration, "captf_job_step_duration_seconds"); n == 0 {
		t.Error("no step series")
	}
	if got := testutil.ToFloat64(metrics.JobErrors.WithLabelValues("TerraformCluster", "plan", "deadline", "my-custom-step")); got != 0 {
		t.Errorf("unknown step leaked into the labels")
	}
}

func TestResourcesChangedAddsEachAction(t *testing.T) {
	metrics.ObserveResourcesChanged("TerraformMachinePool", "destroy", metrics.ResourceChanges{Delete: 3, Import: -1})
	for action, want := range map[string]float64{"create": 0, "update": 0, "delete": 3, "import": 0} {
		if got := testutil.ToFloat64(metrics.ResourcesChanged.WithLabelValues("TerraformMachinePool", "destroy", action)); got != want {
			t.Errorf("%s = %v, want %v", action, got, want)
		}
	}
	metrics.ObserveDriftResources("TerraformMachinePool", metrics.DriftChanges{Update: 1, Replace: 2})
	if got := testutil.ToFloat64(metrics.DriftResources.WithLabelValues("TerraformMachinePool", "replace")); got != 2 {
		t.Errorf("replace = %v, want 2", got)
	}
}

func TestJobsActiveReadsItsSourceAtScrape(t *testing.T) {
	defer metrics.SetActiveJobsSource(nil)
	metrics.SetActiveJobsSource(func() (map[metrics.JobKey]int, bool) { return nil, false })
	if n := testutil.CollectAndCount(metrics.JobsActive); n != 0 {
		t.Errorf("a replica that does not know exports %d series, want none", n)
	}
	running := map[metrics.JobKey]int{{Kind: "TerraformCluster", Op: "apply"}: 2}
	metrics.SetActiveJobsSource(func() (map[metrics.JobKey]int, bool) { return running, true })
	if n := testutil.CollectAndCount(metrics.JobsActive); n != len(metrics.Kinds)*len(metrics.Ops) {
		t.Errorf("%d series, want one per kind and operation", n)
	}
	want := `
# HELP captf_jobs_active [ALPHA] Jobs running by kind and operation, counted from the Job cache at scrape time.
# TYPE captf_jobs_active gauge
`
	var lines []string
	for _, k := range metrics.Kinds {
		for _, op := range metrics.Ops {
			v := "0"
			if k == "TerraformCluster" && op == "apply" {
				v = "2"
			}
			lines = append(lines, `captf_jobs_active{kind="`+k+`",op="`+op+`"} `+v)
		}
	}
	if err := testutil.CollectAndCompare(metrics.JobsActive, strings.NewReader(want+strings.Join(lines, "\n")+"\n")); err != nil {
		t.Error(err)
	}
}

func TestBuildInfoIsOneSeries(t *testing.T) {
	metrics.SetBuildInfo("v0.1.0", "aaa", "v1alpha1")
	metrics.SetBuildInfo("v0.2.0", "bbb", "v1alpha1")
	want := `
# HELP captf_build_info [ALPHA] Constant 1, labelled with the manager's version, commit and module contract version.
# TYPE captf_build_info gauge
captf_build_info{commit="bbb",contract="v1alpha1",version="v0.2.0"} 1
`
	if err := testutil.CollectAndCompare(metrics.BuildInfo, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestForgetDeletesUnhealthySamples(t *testing.T) {
	metrics.SetUnhealthySamples("forget", "m1", 3)
	metrics.SetUnhealthySamples("forget", "m2", 1)
	metrics.Forget("TerraformCluster", "forget", "m1") // another kind: kept
	if got := testutil.ToFloat64(metrics.UnhealthySamples.WithLabelValues("forget", "m1")); got != 3 {
		t.Errorf("Forget of a TerraformCluster touched a machine's samples: %v", got)
	}
	metrics.Forget("TerraformMachine", "forget", "m1")
	if metrics.UnhealthySamples.DeleteLabelValues("forget", "m1") {
		t.Error("Forget left the TerraformMachine's captf_unhealthy_samples")
	}
	if !metrics.UnhealthySamples.DeleteLabelValues("forget", "m2") {
		t.Error("Forget of one machine deleted another's captf_unhealthy_samples")
	}
}

// TestObserveConditions: the gauges follow the conditions after a pass; a
// condition entering False counts once under its reason's label, and
// again only when the reason changes.
func TestObserveConditions(t *testing.T) {
	const kind, ns, name = "TestObserveConditions", "ns", "obj"
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason}
	}
	corrupt := cond(infrav1.StateReadableCondition, metav1.ConditionFalse, infrav1.StateCorruptReason)
	denied := cond(infrav1.IdentityAllowedCondition, metav1.ConditionFalse, infrav1.NamespaceNotAllowedReason)
	notFound := cond(infrav1.RestoreJobSucceededCondition, metav1.ConditionFalse, infrav1.RestoreBackupNotFoundReason)
	invalid := cond(infrav1.OutputsValidCondition, metav1.ConditionFalse, "MissingOutput")
	counters := func() [5]float64 {
		return [5]float64{
			testutil.ToFloat64(metrics.StateReadErrors.WithLabelValues(kind, "corrupt")),
			testutil.ToFloat64(metrics.StateReadErrors.WithLabelValues(kind, "lost")),
			testutil.ToFloat64(metrics.IdentityDenied.WithLabelValues("namespace")),
			testutil.ToFloat64(metrics.StateRestores.WithLabelValues(kind, "not_found")),
			testutil.ToFloat64(metrics.OutputsInvalid.WithLabelValues(kind, "MissingOutput")),
		}
	}
	for _, tc := range []struct {
		name          string
		before, after []metav1.Condition
		counted       [5]float64
	}{
		{"each condition entering False counts", nil, []metav1.Condition{corrupt, denied, notFound, invalid}, [5]float64{1, 0, 1, 1, 1}},
		{"False before with the same reason counts nothing", []metav1.Condition{corrupt, denied, notFound, invalid}, []metav1.Condition{corrupt, denied, notFound, invalid}, [5]float64{}},
		{"another reason counts again", []metav1.Condition{corrupt},
			[]metav1.Condition{cond(infrav1.StateReadableCondition, metav1.ConditionFalse, infrav1.ApplyOutcomeUnknownReason)}, [5]float64{0, 1, 0, 0, 0}},
		{"a reason no label names counts nothing", nil, []metav1.Condition{cond(infrav1.StateReadableCondition, metav1.ConditionFalse, "Other"),
			cond(infrav1.RestoreJobSucceededCondition, metav1.ConditionFalse, "RestoreFailed")}, [5]float64{}},
		{"True counts nothing", nil, []metav1.Condition{cond(infrav1.StateReadableCondition, metav1.ConditionTrue, infrav1.StateCorruptReason)}, [5]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := counters()
			metrics.ObserveConditions(kind, ns, name, tc.before, tc.after)
			after := counters()
			for i := range after {
				if got := after[i] - before[i]; got != tc.counted[i] {
					t.Errorf("counter %d counted %v, want %v", i, got, tc.counted[i])
				}
			}
		})
	}
	metrics.ObserveConditions(kind, ns, name, nil, []metav1.Condition{
		cond(infrav1.ReadyCondition, metav1.ConditionTrue, "Ready"), cond(infrav1.DriftDetectedCondition, metav1.ConditionTrue, "Drift")})
	if r, d := testutil.ToFloat64(metrics.Ready.WithLabelValues(kind, ns, name)), testutil.ToFloat64(metrics.DriftDetected.WithLabelValues(kind, ns, name)); r != 1 || d != 1 {
		t.Errorf("captf_ready %v, captf_drift_detected %v; want 1 and 1", r, d)
	}
	metrics.ObserveConditions(kind, ns, name, nil, []metav1.Condition{cond(infrav1.ReadyCondition, metav1.ConditionFalse, "NotReady")})
	if r, d := testutil.ToFloat64(metrics.Ready.WithLabelValues(kind, ns, name)), testutil.ToFloat64(metrics.DriftDetected.WithLabelValues(kind, ns, name)); r != 0 || d != 0 {
		t.Errorf("captf_ready %v, captf_drift_detected %v; want 0 and 0 (no DriftDetected: none)", r, d)
	}
	metrics.Forget(kind, ns, name)
}

// TestObserveJobResult: a finished Job's result document records its
// steps, the resources it changed (an import counted when reported) and
// the drift it found; no document records nothing.
func TestObserveJobResult(t *testing.T) {
	const kind = "TestObserveJobResult"
	metrics.ObserveJobResult(kind, "apply", nil)
	if n := testutil.ToFloat64(metrics.ResourcesChanged.WithLabelValues(kind, "apply", "create")); n != 0 {
		t.Errorf("no document recorded %v creations", n)
	}
	imported := 2
	doc := &result.Document{Steps: []result.Step{{Name: "apply", Seconds: 3}}, Changes: &result.Changes{Add: 1, Change: 2, Destroy: 3, Import: &imported},
		Drift: &result.Drift{Drift: plan.Drift{Create: 4, Delete: 5}}}
	metrics.ObserveJobResult(kind, "apply", doc)
	for action, want := range map[string]float64{"create": 1, "update": 2, "delete": 3, "import": 2} {
		if got := testutil.ToFloat64(metrics.ResourcesChanged.WithLabelValues(kind, "apply", action)); got != want {
			t.Errorf("%s = %v, want %v", action, got, want)
		}
	}
	if got := testutil.ToFloat64(metrics.DriftResources.WithLabelValues(kind, "delete")); got != 5 {
		t.Errorf("drifted deletes = %v, want 5", got)
	}
	if n := testutil.CollectAndCount(metrics.JobStepDuration, "captf_job_step_duration_seconds"); n == 0 {
		t.Error("no step series")
	}
}
