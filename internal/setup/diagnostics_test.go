package setup

import (
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/metrics"
)

func TestDiagnosticsEndpoints(t *testing.T) {
	o := Defaults()
	secure := o.diagnosticsOptions(nil)
	if !secure.SecureServing || secure.FilterProvider == nil {
		t.Errorf("secure diagnostics: SecureServing %v, filter set %v; want HTTPS with authentication and authorization", secure.SecureServing, secure.FilterProvider != nil)
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/profile", "/debug/pprof/trace", "/debug/flags/v"} {
		if secure.ExtraHandlers[path] == nil {
			t.Errorf("secure diagnostics do not serve %s", path)
		}
	}
	o.InsecureDiagnostics = true
	insecure := o.diagnosticsOptions(nil)
	if insecure.SecureServing || insecure.FilterProvider != nil || len(insecure.ExtraHandlers) != 0 {
		t.Errorf("insecure diagnostics: %+v, want plain HTTP, no checks, no pprof or log endpoints", insecure)
	}
}

func TestVerbosityHandler(t *testing.T) {
	var got string
	set := func(v string) (string, error) {
		if v != "4" {
			return "", errors.New("not a level")
		}
		got = v
		return "successfully set klog.logging.verbosity to 4", nil
	}
	testCases := []struct {
		method, body string
		wantCode     int
		wantLevel    string
	}{
		{method: http.MethodPut, body: "4\n", wantCode: http.StatusOK, wantLevel: "4"},
		{method: http.MethodPut, body: "loud", wantCode: http.StatusBadRequest},
		{method: http.MethodGet, wantCode: http.StatusMethodNotAllowed},
		{method: http.MethodPost, body: "4", wantCode: http.StatusMethodNotAllowed},
	}
	for _, tc := range testCases {
		t.Run(tc.method+" "+tc.body, func(t *testing.T) {
			got = ""
			rec := httptest.NewRecorder()
			verbosityHandler(set).ServeHTTP(rec, httptest.NewRequest(tc.method, "/debug/flags/v", strings.NewReader(tc.body)))
			if rec.Code != tc.wantCode || got != tc.wantLevel {
				t.Errorf("status %d, level %q; want %d, %q", rec.Code, got, tc.wantCode, tc.wantLevel)
			}
		})
	}
}

func TestCountActiveJobs(t *testing.T) {
	job := func(kind, op string, conds ...batchv1.JobConditionType) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{infrav1.OwnerKindLabel: kind, infrav1.OperationLabel: op}}}
		for _, c := range conds {
			j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return j
	}
	suspended := job("TerraformMachine", "apply", batchv1.JobSuspended)
	got := countActive([]batchv1.Job{
		job("TerraformCluster", "apply"), job("TerraformCluster", "apply"), job("TerraformCluster", "apply", batchv1.JobComplete),
		job("TerraformMachine", "destroy", batchv1.JobFailed), suspended, job("TerraformMachinePool", "drift"),
		{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{infrav1.ManagedLabel: "true"}}}, // not a run Job
	})
	want := map[metrics.JobKey]int{{Kind: "TerraformCluster", Op: "apply"}: 2, {Kind: "TerraformMachine", Op: "apply"}: 1, {Kind: "TerraformMachinePool", Op: "drift"}: 1}
	if !maps.Equal(got, want) {
		t.Errorf("countActive = %v, want %v", got, want)
	}
}
