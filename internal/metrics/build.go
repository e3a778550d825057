package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// BuildInfo is a constant 1 labelled with what the manager was built
	// from.
	BuildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "captf_build_info",
		Help: "[ALPHA] Constant 1, labelled with the manager's version, commit and module contract version.",
	}, []string{"version", "commit", "contract"})

	// FeatureEnabled is component-base's kubernetes_feature_enabled: the
	// stage and state of each feature gate.
	FeatureEnabled = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kubernetes_feature_enabled",
		Help: "[BETA] This metric records the data about the stage and enablement of a k8s feature.",
	}, []string{"name", "stage"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(BuildInfo, FeatureEnabled)
}

// SetBuildInfo sets captf_build_info once at start; a second call replaces
// the series rather than adding one.
func SetBuildInfo(version, commit, contract string) {
	BuildInfo.Reset()
	BuildInfo.WithLabelValues(version, commit, contract).Set(1)
}

// RecordFeature sets kubernetes_feature_enabled for one feature gate.
func RecordFeature(name, stage string, enabled bool) {
	v := 0.0
	if enabled {
		v = 1
	}
	FeatureEnabled.WithLabelValues(name, stage).Set(v)
}
