package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// JobsTotal counts finished Jobs by result: succeeded, failed,
	// deadline, interrupted, blocked, plan_changed.
	JobsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_jobs_total",
		Help: "[ALPHA] Finished Jobs by kind, operation and result (succeeded, failed, deadline, interrupted, blocked, plan_changed).",
	}, []string{"kind", "op", "result"})

	// JobDuration is how long finished Jobs ran, from creation to finish.
	JobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "captf_job_duration_seconds",
		Help:    "[ALPHA] Duration of finished Jobs, from creation to finish.",
		Buckets: []float64{15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200},
	}, []string{"kind", "op", "result"})

	// JobQueue is how long Jobs waited from creation until their module
	// container started.
	JobQueue = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "captf_job_queue_seconds",
		Help:    "[ALPHA] Time from a Job's creation until its module container started.",
		Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1200, 1800},
	}, []string{"kind", "op"})

	// Decisions counts what each pass decided.
	Decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_reconcile_op_decisions_total",
		Help: "[ALPHA] Decisions of the lifecycle by kind, operation (none when nothing starts) and reason.",
	}, []string{"kind", "op", "reason"})

	// InputsBytes is the size of an object's rendered inputs, set even
	// when they exceed the cap.
	InputsBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "captf_inputs_bytes",
		Help: "[ALPHA] Bytes of the object's rendered main.tf.json and terraform.tfvars.json.",
	}, objectLabels)

	// ForceUnlocks counts stale state locks handed to a Job to unlock.
	ForceUnlocks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_lock_force_unlocks_total",
		Help: "[ALPHA] Stale state locks force-unlocked by the next Job.",
	}, []string{"kind"})

	// LeaseWaits counts waits for a lease or a Job slot, once per wait.
	LeaseWaits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_lease_waits_total",
		Help: "[ALPHA] Waits before a Job: run_lease, cluster_operation, machine_operations, job_slot.",
	}, []string{"kind", "reason"})

	// StateBackups counts backup sets taken, pruned and skipped.
	StateBackups = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_state_backups_total",
		Help: "[ALPHA] State backup sets by kind and result (taken, pruned, skipped).",
	}, []string{"kind", "result"})

	// LastSuccess is when an operation of the object last succeeded.
	LastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "captf_last_success_timestamp_seconds",
		Help: "[ALPHA] Unix time of the object's newest successful Job per operation.",
	}, append(objectLabels, "op"))

	// Ready, Healthy and DriftDetected mirror conditions: 1 True, 0
	// False, -1 Unknown.
	Ready = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "captf_ready", Help: "[ALPHA] The object's Ready condition: 1 True, 0 False, -1 Unknown.",
	}, objectLabels)
	Healthy = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "captf_infrastructure_healthy", Help: "[ALPHA] The object's InfrastructureHealthy condition: 1 True, 0 False, -1 Unknown.",
	}, objectLabels)
	DriftDetected = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "captf_drift_detected", Help: "[ALPHA] 1 while the object's DriftDetected condition is True, else 0.",
	}, objectLabels)
)

// perObject are the gauges whose series go with their object.
var perObject = []*prometheus.GaugeVec{StateBytes, StateResources, InputsBytes, Ready, Healthy, DriftDetected}

func init() {
	ctrlmetrics.Registry.MustRegister(JobsTotal, JobDuration, JobQueue, Decisions, InputsBytes, ForceUnlocks, LeaseWaits,
		StateBackups, LastSuccess, Ready, Healthy, DriftDetected)
}

// ObserveJob records a finished Job.
func ObserveJob(kind, op, result string, ran time.Duration) {
	JobsTotal.WithLabelValues(kind, op, result).Inc()
	JobDuration.WithLabelValues(kind, op, result).Observe(ran.Seconds())
}

// ConditionValue is a condition status as a gauge value.
func ConditionValue(status string) float64 {
	switch status {
	case "True":
		return 1
	case "False":
		return 0
	}
	return -1
}
