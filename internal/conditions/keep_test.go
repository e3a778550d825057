package conditions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// foreign are the API's condition types no workload carries: other
// kinds' (a TerraformMachineTemplate's, a TerraformPlan's).
var foreign = map[string]bool{"CapacityResolved": true, "VariablesValid": true, "Approved": true}

// TestEveryWorkloadConditionIsDeclared: every condition type the API
// defines is a workload's, with how it goes from pass to pass (Owner), or
// another kind's. A new type without a rule would carry over unchecked.
func TestEveryWorkloadConditionIsDeclared(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../api/v1alpha1/conditions.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasSuffix(vs.Names[0].Name, "Condition") || len(vs.Values) != 1 {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
			v, _ := strconv.Unquote(lit.Value)
			types = append(types, v)
		}
		return true
	})
	if len(types) < 20 {
		t.Fatalf("found %d condition types in the API, want every one of them: %v", len(types), types)
	}
	for _, typ := range types {
		k, ok := Owner(typ)
		switch {
		case foreign[typ] && ok:
			t.Errorf("%s is another kind's, yet declared a workload's", typ)
		case foreign[typ]:
		case !ok:
			t.Errorf("%s has no rule: say whether a step owns it, or it is a record", typ)
		case btoi(k.Step != "")+btoi(k.Record)+btoi(k.Summary) != 1:
			t.Errorf("%s: %+v, want exactly one of a step, a record or the summary", typ, k)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestUnsaid: what Status removes because a step ran unsaid, which the
// engine logs as a bug: a fact the object had or would take at its first
// visit, of a step that ran, neither reported nor dropped by the pass.
func TestUnsaid(t *testing.T) {
	had := []metav1.Condition{{Type: infrav1.IdentityAllowedCondition}, {Type: infrav1.StateReadableCondition}, {Type: infrav1.ApplyJobSucceededCondition}}
	for _, tc := range []struct {
		name string
		in   Pass
		want []string
	}{
		{"nothing ran", Pass{Previous: had}, nil},
		{"a step ran and said it", Pass{Previous: had, Ran: []Step{StepCredentials}, Reported: []metav1.Condition{{Type: infrav1.IdentityAllowedCondition}}}, nil},
		{"a step ran unsaid", Pass{Previous: had, Ran: []Step{StepCredentials, StepState}, Reported: []metav1.Condition{{Type: infrav1.IdentityAllowedCondition}}},
			[]string{infrav1.StateReadableCondition}},
		{"a step ran and dropped it", Pass{Previous: had, Ran: []Step{StepState}, Dropped: []string{infrav1.StateReadableCondition}}, nil},
		{"a first-visit value of a step that ran unsaid", Pass{Ran: []Step{StepOutputs}},
			[]string{infrav1.InfrastructureHealthyCondition, infrav1.OutputsValidCondition}},
		{"a record, whatever ran", Pass{Previous: had, Ran: []Step{StepLifecycle, StepInputs, StepCredentials, StepRunnerRBAC, StepState, StepDependents, StepOwnerSync},
			Reported: []metav1.Condition{{Type: infrav1.IdentityAllowedCondition}, {Type: infrav1.StateReadableCondition}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unsaid(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Unsaid = %v, want %v", got, tc.want)
			}
		})
	}
}
