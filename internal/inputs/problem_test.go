package inputs_test

import (
	"errors"
	"fmt"
	"testing"

	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/inputs"
)

// TestProblem: which errors of building the inputs are a problem of the
// object's configuration, and which one; any other error fails the pass.
func TestProblem(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		want    conditions.InputsProblem
		problem bool
	}{
		{"a variables source not found", fmt.Errorf("reading: %w", &inputs.SourceNotFoundError{Kind: inputs.SourceSecret, Name: "vars"}), conditions.SourceNotFound, true},
		{"an invalid variable", &inputs.InvalidVariableError{Source: "spec.variables", Key: "1x", Reason: "not a name"}, conditions.VariablesInvalid, true},
		{"a fraction in the cluster's exports", &inputs.NumberError{Input: "captf_cluster_outputs", Pointer: "/port"}, conditions.WaitingForExports, true},
		{"a fraction in a variable", &inputs.NumberError{Variable: "size"}, conditions.VariablesInvalid, true},
		{"bootstrap data of no known format", fmt.Errorf("machine: %w", inputs.ErrBootstrapFormat), conditions.WaitingForBootstrap, true},
		{"the API server failed", errors.New("etcdserver: request timed out"), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := inputs.Problem(tc.err)
			if ok != tc.problem || (ok && got != tc.want) {
				t.Errorf("Problem = %v, %v; want %v, %v", got, ok, tc.want, tc.problem)
			}
		})
	}
}
