package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Object names one object's per-object series.
type Object struct{ Kind, Namespace, Name string }

// Series returns the values of every object's per-object gauges (the
// condition mirrors, the state's and inputs' sizes), by object and metric
// name: what a manager restarted over a settled object would not publish
// before the object's next full pass, so its checkpoint keeps them.
func Series() map[Object]map[string]float64 {
	out := map[Object]map[string]float64{}
	for name, g := range seriesByName() {
		ch := make(chan prometheus.Metric)
		go func() { g.Collect(ch); close(ch) }()
		for m := range ch {
			var d dto.Metric
			if m.Write(&d) != nil || d.Gauge == nil {
				continue
			}
			var o Object
			for _, l := range d.Label {
				switch l.GetName() {
				case "kind":
					o.Kind = l.GetValue()
				case "namespace":
					o.Namespace = l.GetValue()
				case "name":
					o.Name = l.GetValue()
				}
			}
			if g == UnhealthySamples {
				o.Kind = "TerraformMachine"
			}
			if out[o] == nil {
				out[o] = map[string]float64{}
			}
			out[o][name] = d.Gauge.GetValue()
		}
	}
	return out
}

// Restore publishes an object's per-object gauges as Series returned them;
// a name it does not know is left out.
func Restore(o Object, values map[string]float64) {
	gauges := seriesByName()
	for name, v := range values {
		g, ok := gauges[name]
		switch {
		case !ok:
		case g == UnhealthySamples:
			if o.Kind == "TerraformMachine" {
				g.WithLabelValues(o.Namespace, o.Name).Set(v)
			}
		default:
			g.WithLabelValues(o.Kind, o.Namespace, o.Name).Set(v)
		}
	}
}

// seriesByName are the per-object gauges, by metric name (Forget deletes
// the same series, and LastSuccess, which a restarted manager publishes
// again once an operation succeeds).
func seriesByName() map[string]*prometheus.GaugeVec {
	return map[string]*prometheus.GaugeVec{
		"captf_state_bytes": StateBytes, "captf_state_resources": StateResources, "captf_inputs_bytes": InputsBytes,
		"captf_ready": Ready, "captf_infrastructure_healthy": Healthy, "captf_drift_detected": DriftDetected,
		"captf_unhealthy_samples": UnhealthySamples,
	}
}
