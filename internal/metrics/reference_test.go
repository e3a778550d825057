package metrics_test

import (
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"captf.io/captf/internal/metrics"
)

// referenceMetric is a row of the operator reference's metrics tables:
// name, type, labels, and for histograms the first and last bucket.
type referenceMetric struct {
	name        string
	typ         dto.MetricType
	labels      []string
	first, last float64
}

// referenceMetrics are the reference's tables (§7.2), every row.
var referenceMetrics = []referenceMetric{
	// Jobs
	{"captf_jobs_total", dto.MetricType_COUNTER, []string{"kind", "op", "result"}, 0, 0},
	{"captf_job_duration_seconds", dto.MetricType_HISTOGRAM, []string{"kind", "op", "result"}, 15, 7200},
	{"captf_job_step_duration_seconds", dto.MetricType_HISTOGRAM, []string{"kind", "op", "step"}, 1, 7200},
	{"captf_job_queue_seconds", dto.MetricType_HISTOGRAM, []string{"kind", "op"}, 5, 1800},
	{"captf_job_errors_total", dto.MetricType_COUNTER, []string{"kind", "op", "error_kind", "step"}, 0, 0},
	{"captf_jobs_active", dto.MetricType_GAUGE, []string{"kind", "op"}, 0, 0},
	{"captf_job_attempts", dto.MetricType_HISTOGRAM, []string{"kind", "op"}, 1, 30},
	{"captf_resources_changed_total", dto.MetricType_COUNTER, []string{"kind", "op", "action"}, 0, 0},
	// Decisions
	{"captf_reconcile_op_decisions_total", dto.MetricType_COUNTER, []string{"kind", "op", "reason"}, 0, 0},
	// State & inputs
	{"captf_state_read_errors_total", dto.MetricType_COUNTER, []string{"kind", "reason"}, 0, 0},
	{"captf_state_resources", dto.MetricType_GAUGE, []string{"kind", "namespace", "name"}, 0, 0},
	{"captf_state_bytes", dto.MetricType_GAUGE, []string{"kind", "namespace", "name"}, 0, 0},
	{"captf_inputs_bytes", dto.MetricType_GAUGE, []string{"kind", "namespace", "name"}, 0, 0},
	{"captf_state_backups_total", dto.MetricType_COUNTER, []string{"kind", "result"}, 0, 0},
	{"captf_state_restores_total", dto.MetricType_COUNTER, []string{"kind", "result"}, 0, 0},
	{"captf_outputs_invalid_total", dto.MetricType_COUNTER, []string{"kind", "reason"}, 0, 0},
	{"captf_inputs_hash_changes_total", dto.MetricType_COUNTER, []string{"kind"}, 0, 0},
	// Drift/health
	{"captf_ready", dto.MetricType_GAUGE, []string{"kind", "namespace", "name"}, 0, 0},
	{"captf_infrastructure_healthy", dto.MetricType_GAUGE, []string{"kind", "namespace", "name"}, 0, 0},
	{"captf_drift_detected", dto.MetricType_GAUGE, []string{"kind", "namespace", "name"}, 0, 0},
	{"captf_drift_resources_total", dto.MetricType_COUNTER, []string{"kind", "action"}, 0, 0},
	{"captf_last_success_timestamp_seconds", dto.MetricType_GAUGE, []string{"kind", "namespace", "name", "op"}, 0, 0},
	{"captf_unhealthy_samples", dto.MetricType_GAUGE, []string{"namespace", "name"}, 0, 0},
	{"captf_remediation_requests_total", dto.MetricType_COUNTER, []string{"action"}, 0, 0},
	// Locks/leases/approvals
	{"captf_lock_force_unlocks_total", dto.MetricType_COUNTER, []string{"kind"}, 0, 0},
	{"captf_lease_waits_total", dto.MetricType_COUNTER, []string{"kind", "reason"}, 0, 0},
	{"captf_plan_approvals_total", dto.MetricType_COUNTER, []string{"kind", "result"}, 0, 0},
	// Identity/images
	{"captf_identity_denied_total", dto.MetricType_COUNTER, []string{"reason"}, 0, 0},
	{"captf_image_inspect_errors_total", dto.MetricType_COUNTER, []string{"reason"}, 0, 0},
	// Build
	{"captf_build_info", dto.MetricType_GAUGE, []string{"version", "commit", "contract"}, 0, 0},
}

// recordOneOfEach records a sample through every recording function, so
// that every vector has a series to gather; the per-object series go when
// the test ends.
func recordOneOfEach(t *testing.T) {
	const k, ns, n = "TerraformMachine", "reference", "m1"
	t.Cleanup(func() {
		metrics.Forget(k, ns, n)
		metrics.SetActiveJobsSource(nil)
	})
	metrics.ObserveJob(k, "apply", "succeeded", 90e9)
	metrics.JobQueue.WithLabelValues(k, "apply").Observe(12)
	metrics.ObserveStep(k, "apply", "init", 3)
	metrics.ObserveJobError(k, "apply", metrics.ErrorKindStep, "apply")
	metrics.ObserveAttempts(k, "apply", 2)
	metrics.ObserveResourcesChanged(k, "apply", metrics.ResourceChanges{Create: 2})
	metrics.SetActiveJobsSource(func() (map[metrics.JobKey]int, bool) { return nil, true })
	metrics.Decisions.WithLabelValues(k, "none", "UpToDate").Inc()
	metrics.StateReadErrors.WithLabelValues(k, "corrupt").Inc()
	metrics.StateResources.WithLabelValues(k, ns, n).Set(3)
	metrics.StateBytes.WithLabelValues(k, ns, n).Set(300)
	metrics.InputsBytes.WithLabelValues(k, ns, n).Set(100)
	metrics.StateBackups.WithLabelValues(k, "taken").Inc()
	metrics.ObserveStateRestore(k, "succeeded")
	metrics.ObserveOutputsInvalid(k, "OutputsInvalid")
	metrics.ObserveInputsHashChange(k)
	metrics.Ready.WithLabelValues(k, ns, n).Set(1)
	metrics.Healthy.WithLabelValues(k, ns, n).Set(1)
	metrics.DriftDetected.WithLabelValues(k, ns, n).Set(0)
	metrics.ObserveDriftResources(k, metrics.DriftChanges{Replace: 1})
	metrics.LastSuccess.WithLabelValues(k, ns, n, "apply").Set(1.7e9)
	metrics.SetUnhealthySamples(ns, n, 2)
	metrics.ObserveRemediationRequest("requested")
	metrics.ForceUnlocks.WithLabelValues(k).Inc()
	metrics.LeaseWaits.WithLabelValues(k, "job_slot").Inc()
	metrics.ObservePlanApproval("TerraformCluster", "created")
	metrics.ObserveIdentityDenied("namespace")
	metrics.ObserveImageInspectError("unauthorized")
	metrics.SetBuildInfo("v0.1.0", "abc", "v1alpha1")
}

// Every metric of the reference is served by the manager's registry, with
// its type, exactly its labels, an [ALPHA] HELP and its buckets.
func TestEveryReferenceMetricIsServed(t *testing.T) {
	recordOneOfEach(t)
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]*dto.MetricFamily{}
	for _, f := range families {
		served[f.GetName()] = f
	}
	for _, tc := range referenceMetrics {
		t.Run(tc.name, func(t *testing.T) {
			f := served[tc.name]
			if f == nil {
				t.Fatalf("%s is not served", tc.name)
			}
			if f.GetType() != tc.typ {
				t.Errorf("type %s, want %s", f.GetType(), tc.typ)
			}
			if !strings.HasPrefix(f.GetHelp(), "[ALPHA] ") {
				t.Errorf("HELP %q does not start with [ALPHA]", f.GetHelp())
			}
			m := f.GetMetric()[0]
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName())
			}
			want := slices.Clone(tc.labels)
			slices.Sort(want)
			if !slices.Equal(labels, want) {
				t.Errorf("labels %v, want %v", labels, want)
			}
			if tc.typ == dto.MetricType_HISTOGRAM {
				b := m.GetHistogram().GetBucket()
				if b[0].GetUpperBound() != tc.first || b[len(b)-1].GetUpperBound() != tc.last {
					t.Errorf("buckets %v…%v, want %v…%v", b[0].GetUpperBound(), b[len(b)-1].GetUpperBound(), tc.first, tc.last)
				}
			}
		})
	}
	var extra []string
	for name := range served {
		if strings.HasPrefix(name, "captf_") && !slices.ContainsFunc(referenceMetrics, func(r referenceMetric) bool { return r.name == name }) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		t.Errorf("captf metrics outside the reference: %v", extra)
	}
}

func TestQueueBucketsIncludeTheAlertThreshold(t *testing.T) {
	recordOneOfEach(t)
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "captf_job_queue_seconds" {
			continue
		}
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			if b.GetUpperBound() == 300 {
				return
			}
		}
	}
	t.Error("captf_job_queue_seconds has no 300s bucket, which CAPTFJobQueueSlow compares against")
}
