package workspace

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestAnObjectReleasedElsewhereLeavesNoSeries: with two managers, the one
// that did not release an object last exported its series; its next pass
// finds the object gone and they go, or its alerts (no recent success,
// drift, state near the Secret limit) would fire for a deleted object
// until a restart.
func TestAnObjectReleasedElsewhereLeavesNoSeries(t *testing.T) {
	envtest.Require(t, env)
	e := &Engine{Client: env.Client, APIReader: env.Client}
	ns := envtest.Namespace(t, env.Client, "released-elsewhere")
	kind := roles.Cluster{}.Kind()
	metrics.StateBytes.WithLabelValues(kind, ns, "c").Set(2048)
	if _, _, err := e.attempt(t.Context(), roles.Cluster{}, client.ObjectKey{Namespace: ns, Name: "c"}, false, nil); err != nil {
		t.Fatal(err)
	}
	if metrics.StateBytes.DeleteLabelValues(kind, ns, "c") {
		t.Error("captf_state_bytes of an object gone is still exported")
	}
}
