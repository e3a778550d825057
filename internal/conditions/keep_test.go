package conditions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
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
