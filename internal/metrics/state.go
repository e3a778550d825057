package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"captf.io/captf/pkg/state"
)

var objectLabels = []string{"kind", "namespace", "name"}

var (
	// StateBytes is the compressed size of an object's state summed over
	// its Secrets. A Secret holds at most 1 MiB: OpenTofu cannot store a
	// state past it, Terraform splits it into more Secrets.
	StateBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "captf_state_bytes",
		Help: "[ALPHA] Compressed bytes of the object's Terraform/OpenTofu state, summed over its Secrets.",
	}, objectLabels)

	// StateResources is the number of managed resources in an object's
	// state (a resource with count or for_each counts once).
	StateResources = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "captf_state_resources",
		Help: "[ALPHA] Managed resources (no data sources) in the object's state.",
	}, objectLabels)

	// StateReadErrors counts failed state reads by reason.
	StateReadErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "captf_state_read_errors_total",
		Help: "[ALPHA] State reads that failed, by reason (inconsistent, encrypted, corrupt, lost, locked).",
	}, []string{"kind", "reason"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(StateBytes, StateResources, StateReadErrors)
}

// ObserveState records what a read of an object's state found.
func ObserveState(kind, namespace, name string, st *state.State) {
	StateBytes.WithLabelValues(kind, namespace, name).Set(float64(st.CompressedBytes))
	StateResources.WithLabelValues(kind, namespace, name).Set(float64(st.ManagedResources))
}

// Forget deletes an object's per-object series, once the object is gone.
func Forget(kind, namespace, name string) {
	for _, g := range perObject {
		g.DeleteLabelValues(kind, namespace, name)
	}
	LastSuccess.DeletePartialMatch(prometheus.Labels{"kind": kind, "namespace": namespace, "name": name})
	if kind == "TerraformMachine" {
		UnhealthySamples.DeleteLabelValues(namespace, name)
	}
}
