package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// StateRestores counts restore Jobs by result.
	StateRestores = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_state_restores_total",
		Help: "[ALPHA] State restores by kind and result (succeeded, failed, not_found).",
	}, []string{"kind", "result"})

	// OutputsInvalid counts transitions of OutputsValid into False.
	OutputsInvalid = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_outputs_invalid_total",
		Help: "[ALPHA] Times the module's outputs were found invalid, by kind and reason.",
	}, []string{"kind", "reason"})

	// InputsHashChanges counts applies started because a mutable kind's
	// inputs changed.
	InputsHashChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_inputs_hash_changes_total",
		Help: "[ALPHA] Applies caused by a change of the inputs of a mutable kind.",
	}, []string{"kind"})

	// DriftResources counts the resources drift plans found, by action.
	DriftResources = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_drift_resources_total",
		Help: "[ALPHA] Resources drift detection found changed, by kind and action (create, update, replace, delete).",
	}, []string{"kind", "action"})

	// UnhealthySamples mirrors a TerraformMachine's status.unhealthySamples.
	UnhealthySamples = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "captf_unhealthy_samples",
		Help: "[ALPHA] The TerraformMachine's status.unhealthySamples.",
	}, []string{"namespace", "name"})

	// RemediationRequests counts remediation annotations CAPTF set or
	// removed on Machines.
	RemediationRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_remediation_requests_total",
		Help: "[ALPHA] Machine remediation requests by action (requested, withdrawn); only changes actually made.",
	}, []string{"action"})

	// PlanApprovals counts TerraformPlans through their life.
	PlanApprovals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_plan_approvals_total",
		Help: "[ALPHA] TerraformPlans by kind and result (created, approved, applied, superseded, failed).",
	}, []string{"kind", "result"})

	// IdentityDenied counts objects refused their identity.
	IdentityDenied = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_identity_denied_total",
		Help: "[ALPHA] Identity references denied by reason (notfound, incomplete, namespace).",
	}, []string{"reason"})

	// ImageInspectErrors counts failed module image inspections of
	// template capacity resolution.
	ImageInspectErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_image_inspect_errors_total",
		Help: "[ALPHA] Failed module image inspections during template capacity resolution, by reason.",
	}, []string{"reason"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(StateRestores, OutputsInvalid, InputsHashChanges, DriftResources, UnhealthySamples,
		RemediationRequests, PlanApprovals, IdentityDenied, ImageInspectErrors)
}

// ObserveStateRestore records the end of a restore: result is succeeded,
// failed (the restore Job failed) or not_found (the named backup serial does
// not exist). Call it once per restore request.
func ObserveStateRestore(kind, result string) {
	StateRestores.WithLabelValues(kind, result).Inc()
}

// ObserveOutputsInvalid records OutputsValid entering False (and again when
// its reason or message changes), with the condition's reason.
func ObserveOutputsInvalid(kind, reason string) {
	OutputsInvalid.WithLabelValues(kind, reason).Inc()
}

// ObserveInputsHashChange records an apply started because a mutable
// kind's inputs hash differs from its state's (the InputsChanged event).
func ObserveInputsHashChange(kind string) {
	InputsHashChanges.WithLabelValues(kind).Inc()
}

// DriftChanges are the counts of a drift plan.
type DriftChanges struct {
	Create, Update, Replace, Delete int
}

// ObserveDriftResources adds what a drift Job's plan found, once per drift
// Job that finished with a plan.
func ObserveDriftResources(kind string, c DriftChanges) {
	for action, n := range map[string]int{"create": c.Create, "update": c.Update, "replace": c.Replace, "delete": c.Delete} {
		DriftResources.WithLabelValues(kind, action).Add(float64(max(n, 0)))
	}
}

// SetUnhealthySamples mirrors a TerraformMachine's status.unhealthySamples
// whenever its status is computed; Forget of the TerraformMachine deletes
// the series.
func SetUnhealthySamples(namespace, name string, samples int32) {
	UnhealthySamples.WithLabelValues(namespace, name).Set(float64(samples))
}

// ObserveRemediationRequest records a remediation annotation actually
// written (requested) or removed (withdrawn) on a Machine, after the patch
// succeeded; a Conflict that changed nothing is not counted.
func ObserveRemediationRequest(action string) {
	RemediationRequests.WithLabelValues(action).Inc()
}

// ObservePlanApproval records a TerraformPlan event: created, approved
// (bookkeeping first sees spec.approved), applied (its apply succeeded),
// superseded or failed.
func ObservePlanApproval(kind, result string) {
	PlanApprovals.WithLabelValues(kind, result).Inc()
}

// ObserveIdentityDenied records an object refused its identity:
// notfound, incomplete or namespace (IdentityAllowed entering False).
func ObserveIdentityDenied(reason string) {
	IdentityDenied.WithLabelValues(reason).Inc()
}

// ObserveImageInspectError records a failed module image inspection of a
// TerraformMachineTemplate's capacity resolution.
func ObserveImageInspectError(reason string) {
	ImageInspectErrors.WithLabelValues(reason).Inc()
}
