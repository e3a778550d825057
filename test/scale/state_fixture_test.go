package scale_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"captf.io/captf/internal/outputs"
	"captf.io/captf/pkg/state"
)

// TestStateFixture checks what the benchmark relies on: its states decode
// as the manager decodes them, at about the compressed size asked for,
// with outputs that provision a machine and a cluster.
func TestStateFixture(t *testing.T) {
	testCases := []struct {
		name   string
		target int
	}{
		{"small", smallState},
		{"large", largeState},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			outs := machineOutputs("m-0", failureDomain)
			n, err := instancesFor(tc.target, outs)
			if err != nil {
				t.Fatal(err)
			}
			data, err := gzippedState(7, outs, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(data); got < tc.target*95/100 || got > tc.target*105/100 {
				t.Errorf("gzipped state is %d bytes, want %d ± 5%%", got, tc.target)
			}
			sec, err := stateSecret("ns", state.KindMachine, "m-0", "demo", fakeInputsHash("m-0"), data)
			if err != nil {
				t.Fatal(err)
			}
			suffix := sec.Labels[state.LabelSecretSuffix]
			if !state.Selector(suffix).Matches(labels.Set(sec.Labels)) {
				t.Errorf("state Secret labels %v do not match the backend's selector", sec.Labels)
			}
			st, err := state.Decode(suffix, []corev1.Secret{*sec})
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if st.ManagedResources != 1 || st.Serial != 3 {
				t.Errorf("decoded %d managed resources at serial %d, want 1 at serial 3", st.ManagedResources, st.Serial)
			}
			m, report := outputs.ReadMachine(st.Outputs, outputs.MachineExpect{FailureDomain: failureDomain})
			if !report.Valid() || report.Pending() || m.ProviderID == "" || m.Health == nil || m.Health.Pending() {
				t.Errorf("machine outputs do not provision: %+v", report)
			}
		})
	}
	data, err := gzippedState(8, clusterOutputs("api.scale.test", 6443, failureDomain), 0)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := stateSecret("ns", state.KindCluster, "demo", "demo", fakeInputsHash("demo"), data)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Decode(sec.Labels[state.LabelSecretSuffix], []corev1.Secret{*sec})
	if err != nil {
		t.Fatalf("decoding the cluster state: %v", err)
	}
	if c, report := outputs.ReadCluster(st.Outputs); !report.Valid() || report.Pending() || c.Endpoint == nil || len(c.FailureDomains) != 1 {
		t.Errorf("cluster outputs do not provision: %+v", report)
	}
}
