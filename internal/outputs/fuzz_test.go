package outputs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"captf.io/captf/internal/outputs"
	"captf.io/captf/pkg/state"
)

// FuzzRead feeds arbitrary output values (a JSON object of output name to
// value) to every role: no panic, and what a valid report lets through
// keeps the documented shape.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "state", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var raw map[string]struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			f.Fatal(err)
		}
		values := map[string]json.RawMessage{}
		for k, o := range raw {
			values[k] = o.Value
		}
		seed, _ := json.Marshal(values)
		f.Add(seed)
	}
	f.Add([]byte(`{"provider_id":"","addresses":[],"health":{"state":"unknown","healthy":false,"reasons":null}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var values map[string]json.RawMessage
		if json.Unmarshal(doc, &values) != nil {
			return
		}
		outs := map[string]state.Output{}
		for k, v := range values {
			outs[k] = state.Output{Value: v}
		}
		c, cr := outputs.ReadCluster(outs)
		m, mr := outputs.ReadMachine(outs, outputs.MachineExpect{FailureDomain: "zone-a"})
		p, pr := outputs.ReadPool(outs)
		for _, r := range []outputs.Report{cr, mr, pr} {
			if msg := r.Condition().Message; msg == "" || len(msg) > 4096 {
				t.Errorf("OutputsValid message of %d bytes", len(msg))
			}
		}
		for _, h := range []*outputs.Health{c.Health, m.Health, p.Health} {
			if msg := outputs.HealthCondition(h).Message; msg == "" || len(msg) > outputs.MaxHealthMessage {
				t.Errorf("InfrastructureHealthy message of %d bytes", len(msg))
			}
		}
		if cr.Valid() && (c.Exports == nil || !json.Valid(c.Exports)) {
			t.Errorf("valid cluster with exports %d bytes", len(c.Exports))
		}
		if mr.Valid() && m.FailureDomain != "" && m.FailureDomain != "zone-a" {
			t.Error("a valid machine is outside the requested failure domain")
		}
		if pr.Valid() {
			if !slices.IsSorted(p.ProviderIDList) || len(slices.Compact(slices.Clone(p.ProviderIDList))) != len(p.ProviderIDList) {
				t.Error("provider_id_list not sorted and unique")
			}
			if len(p.Instances) > outputs.MaxInstances || p.Replicas == nil && !pr.Pending() {
				t.Errorf("%d instances, replicas %v", len(p.Instances), p.Replicas)
			}
			if strings.Contains(pr.Condition().Message, "is missing") {
				t.Error("a valid report names a missing output")
			}
		}
	})
}
