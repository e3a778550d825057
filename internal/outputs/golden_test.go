package outputs_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"captf.io/captf/internal/outputs"
	"captf.io/captf/pkg/state"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current results")

// golden is what a read of real state outputs gives, as checked in.
type golden struct {
	Value                 any              `json:"value"`
	OutputsValid          metav1.Condition `json:"outputsValid"`
	InfrastructureHealthy metav1.Condition `json:"infrastructureHealthy"`
	Valid                 bool             `json:"valid"`
	PendingOutputs        []string         `json:"pendingOutputs,omitempty"`
}

func view(value any, health *outputs.Health, r outputs.Report) golden {
	g := golden{Value: value, OutputsValid: r.Condition(), InfrastructureHealthy: outputs.HealthCondition(health), Valid: r.Valid()}
	for _, p := range r.Problems {
		if r.IsPending(p.Output) {
			g.PendingOutputs = append(g.PendingOutputs, p.Output)
		}
	}
	return g
}

// TestGolden reads outputs OpenTofu wrote to state (testdata/state, made
// from testdata/modules) and compares the result with testdata/golden.
func TestGolden(t *testing.T) {
	testCases := []struct {
		name  string
		state string
		read  func(map[string]state.Output) golden
	}{
		{"cluster", "cluster", func(o map[string]state.Output) golden {
			c, r := outputs.ReadCluster(o)
			return view(c, c.Health, r)
		}},
		{"cluster-null", "cluster-null", func(o map[string]state.Output) golden {
			c, r := outputs.ReadCluster(o)
			return view(c, c.Health, r)
		}},
		{"machine", "machine", func(o map[string]state.Output) golden {
			m, r := outputs.ReadMachine(o, outputs.MachineExpect{FailureDomain: "us-east-1a", ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"})
			return view(m, m.Health, r)
		}},
		{"machine-moved", "machine", func(o map[string]state.Output) golden {
			m, r := outputs.ReadMachine(o, outputs.MachineExpect{FailureDomain: "us-east-1b", ProviderID: "aws:///us-east-1b/i-0fedcba9876543210"})
			return view(m, m.Health, r)
		}},
		{"machine-pending", "machine-pending", func(o map[string]state.Output) golden {
			m, r := outputs.ReadMachine(o, outputs.MachineExpect{FailureDomain: "us-east-1a"})
			return view(m, m.Health, r)
		}},
		{"pool", "pool", func(o map[string]state.Output) golden {
			p, r := outputs.ReadPool(o)
			return view(p, p.Health, r)
		}},
		{"pool-nulls", "pool-nulls", func(o map[string]state.Output) golden {
			p, r := outputs.ReadPool(o)
			return view(p, p.Health, r)
		}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.MarshalIndent(tc.read(stateOutputs(t, tc.state)), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", tc.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (go test -update rewrites it):\n%s", path, got)
			}
		})
	}
}
