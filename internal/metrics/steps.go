package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"captf.io/captf/internal/runner/result"
)

// Step label values: the runner's steps, `none` when no step failed and
// `other` for anything else, so the label stays a bounded enum.
const (
	StepNone  = "none"
	StepOther = "other"
)

// steps are the step label values the runner reports (internal/runner's
// Step* constants).
var steps = map[string]bool{
	"init": true, "force-unlock": true, "validate": true, "plan": true, "show-json": true, "apply": true,
	"apply-refresh-only": true, "destroy": true, "state-push": true, "state-list": true, "prepare": true,
}

// StepLabel is step as a label value: the step itself when it is one of the
// runner's, `none` when empty, else `other`.
func StepLabel(step string) string {
	switch {
	case step == "" || step == StepNone:
		return StepNone
	case steps[step]:
		return step
	}
	return StepOther
}

var (
	// JobStepDuration is how long each step of a finished Job ran.
	JobStepDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "captf_job_step_duration_seconds",
		Help:    "[ALPHA] Duration of the steps of finished Jobs by kind, operation and step.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200},
	}, []string{"kind", "op", "step"})

	// JobErrors counts finished Jobs that did not succeed, by what went
	// wrong and the step that failed.
	JobErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_job_errors_total",
		Help: "[ALPHA] Jobs that did not succeed by kind, operation, error kind (step, image-layout, interrupted, blocked, plan-changed, deadline, unknown) and failed step (none if none failed).",
	}, []string{"kind", "op", "error_kind", "step"})

	// JobAttempts is the attempt number of each succeeded Job.
	JobAttempts = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "captf_job_attempts",
		Help:    "[ALPHA] Attempt number of succeeded Jobs: 1 + the failed Jobs of the operation since its last success (interrupted excluded).",
		Buckets: []float64{1, 2, 3, 4, 5, 7, 10, 15, 20, 30},
	}, []string{"kind", "op"})

	// ResourcesChanged counts the resources finished Jobs changed, by
	// action, from the runtime's summary line.
	ResourcesChanged = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_resources_changed_total",
		Help: "[ALPHA] Resources changed by Jobs by kind, operation and action (create, update, delete, import).",
	}, []string{"kind", "op", "action"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(JobStepDuration, JobErrors, JobAttempts, ResourcesChanged)
}

// Job error kinds, the error_kind label of captf_job_errors_total.
const (
	ErrorKindStep        = "step"
	ErrorKindImageLayout = "image-layout"
	ErrorKindInterrupted = "interrupted"
	ErrorKindBlocked     = "blocked"
	ErrorKindPlanChanged = "plan-changed"
	ErrorKindDeadline    = "deadline"
	ErrorKindUnknown     = "unknown"
)

// ObserveStep records one step of a finished Job: call it from the
// bookkeeping of a finished Job, once per step listed in its result
// document (step is the runner's step name; others count as `other`).
func ObserveStep(kind, op, step string, seconds float64) {
	JobStepDuration.WithLabelValues(kind, op, StepLabel(step)).Observe(seconds)
}

// ObserveJobError records a finished Job that did not succeed, once per
// Job: errorKind is one of the ErrorKind* values (the result document's
// error kind; deadline or unknown when the Job left no result) and step is
// the step that failed ("" or `none` when none did).
func ObserveJobError(kind, op, errorKind, step string) {
	JobErrors.WithLabelValues(kind, op, errorKind, StepLabel(step)).Inc()
}

// ObserveAttempts records the attempt number of a succeeded Job: 1 plus
// the failed Jobs of the same operation since its last success
// (interrupted Jobs excluded). Call it once per succeeded Job.
func ObserveAttempts(kind, op string, attempt int) {
	JobAttempts.WithLabelValues(kind, op).Observe(float64(attempt))
}

// ResourceChanges are the counts of the runtime's summary line.
type ResourceChanges struct {
	Create, Update, Delete, Import int
}

// ObserveResourcesChanged adds what a finished Job changed, from the
// runtime summary line of its result document. Call it once per Job.
func ObserveResourcesChanged(kind, op string, c ResourceChanges) {
	for action, n := range map[string]int{"create": c.Create, "update": c.Update, "delete": c.Delete, "import": c.Import} {
		ResourcesChanged.WithLabelValues(kind, op, action).Add(float64(max(n, 0)))
	}
}

// ObserveJobResult records what the runner's result document of a
// finished Job says (nil: nothing): the duration of each step, the
// resources changed, and the drift found.
func ObserveJobResult(kind, op string, doc *result.Document) {
	if doc == nil {
		return
	}
	for _, st := range doc.Steps {
		ObserveStep(kind, op, st.Name, st.Seconds)
	}
	if c := doc.Changes; c != nil {
		rc := ResourceChanges{Create: c.Add, Update: c.Change, Delete: c.Destroy}
		if c.Import != nil {
			rc.Import = *c.Import
		}
		ObserveResourcesChanged(kind, op, rc)
	}
	if d := doc.Drift; d != nil {
		ObserveDriftResources(kind, DriftChanges{Create: d.Create, Update: d.Update, Replace: d.Replace, Delete: d.Delete})
	}
}
