package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"captf.io/captf/internal/metrics"
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
