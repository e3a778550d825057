package modulecheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// checkOutputs checks the root module's outputs against the role's
// contract outputs.
func (l *loader) checkOutputs(m *module, role contract.Role) error {
	names, err := contract.OutputNames(role)
	if err != nil {
		return err
	}
	for _, n := range names {
		o := m.outputs[n]
		if o == nil {
			l.missingOutput(n, role)
			continue
		}
		switch {
		case n == "health":
			l.checkHealth(o)
		case n == "control_plane_endpoint" && role == contract.RoleCluster && isNull(o.value):
			l.add(idEndpointNeverSet, o.file.rel, o.line, `output "control_plane_endpoint" is always null, so the cluster gets an endpoint only if its user sets one: output the load balancer's host and port`)
		case n == "provider_id_list" && role == contract.RoleMachinePool:
			l.checkProviderIDList(o)
		}
	}
	for _, name := range sortedKeys(m.outputs) {
		if strings.HasPrefix(name, "captf_") {
			o := m.outputs[name]
			l.add(idOutputReserved, o.file.rel, o.line, fmt.Sprintf("output %q: the captf_ prefix is reserved and CAPTF never reads it: rename it", name))
		}
	}
	return nil
}

func (l *loader) missingOutput(name string, role contract.Role) {
	switch {
	case name == "health":
		l.add(idOutputHealth, lint.Whole, 0, `the module declares no output "health": output { state, healthy } (state "running" and healthy true when it cannot observe)`)
	case name == "provider_id_list" && role == contract.RoleMachinePool:
		l.add(idProviderIDList, lint.Whole, 0, `the module declares no output "provider_id_list": output the sorted provider IDs of every member that is not terminated`)
	default:
		l.add(idOutputRequired, lint.Whole, 0, fmt.Sprintf("the module declares no output %q, which the %s role requires: declare it (null until known)", name, role))
	}
}

// checkHealth finds a health output written as an object without the
// attributes the contract requires.
func (l *loader) checkHealth(o *output) {
	if o.value == nil {
		return
	}
	pairs, diags := hcl.ExprMap(o.value)
	if diags.HasErrors() {
		return
	}
	has := map[string]bool{}
	for _, p := range pairs {
		has[keyName(p.Key)] = true
	}
	for _, want := range []string{"state", "healthy"} {
		if !has[want] {
			l.add(idOutputHealth, o.file.rel, o.line, fmt.Sprintf(`output "health" has no %q attribute: output { state, healthy } as the contract says`, want))
		}
	}
}

// checkProviderIDList checks the pool's provider_id_list expression: a
// list, sorted by sort() in the output itself, not filtered on the
// members' health or state. JSON syntax is not scanned.
func (l *loader) checkProviderIDList(o *output) {
	e, ok := o.value.(hclsyntax.Expression)
	if !ok {
		return
	}
	e = unwrap(e)
	if isNull(e) {
		return // not known yet, which the contract allows
	}
	switch t := e.(type) {
	case *hclsyntax.LiteralValueExpr, *hclsyntax.TemplateExpr, *hclsyntax.ObjectConsExpr:
		l.add(idProviderIDList, o.file.rel, o.line, `output "provider_id_list" is not a list: output the provider IDs of the members as a list of strings`)
		return
	case *hclsyntax.TupleConsExpr:
		if len(t.Exprs) == 0 {
			return // a pool with no members yet
		}
	}
	if call, ok := e.(*hclsyntax.FunctionCallExpr); !ok || call.Name != "sort" {
		l.addAt(idProviderIDList, lint.Warning, o.file.rel, o.line, `output "provider_id_list" is not wrapped in sort(): write sort(...) in the output itself so its order never changes between applies (distinct() alone does not sort)`)
	}
	if filtersOnHealth(e) {
		l.addAt(idProviderIDList, lint.Warning, o.file.rel, o.line, `output "provider_id_list" filters members on their health or state: list every member that is not terminated, whatever its health`)
	}
}

func unwrap(e hclsyntax.Expression) hclsyntax.Expression {
	for {
		p, ok := e.(*hclsyntax.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expression
	}
}

// healthWords are the words of a name (split at "_") that say it holds a
// member's health or state.
var healthWords = []string{"health", "healthy", "state", "status"}

// filtersOnHealth tells whether a for expression of e has a condition
// that reads an attribute named like a health or a state, other than to
// leave out the terminated members (which the contract asks for).
func filtersOnHealth(e hclsyntax.Expression) bool {
	found := false
	_ = hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		f, ok := n.(*hclsyntax.ForExpr)
		if !ok || f.CondExpr == nil || mentionsTerminated(f.CondExpr) {
			return nil
		}
		_ = hclsyntax.VisitAll(f.CondExpr, func(n hclsyntax.Node) hcl.Diagnostics {
			var names []string
			switch t := n.(type) {
			case *hclsyntax.ScopeTraversalExpr:
				names = stepNames(t.Traversal)
			case *hclsyntax.RelativeTraversalExpr:
				names = stepNames(t.Traversal)
			case *hclsyntax.IndexExpr:
				if k, ok := literal(t.Key); ok && k.Type().FriendlyName() == "string" && !k.IsNull() {
					names = []string{k.AsString()}
				}
			}
			for _, name := range names {
				for _, w := range strings.Split(strings.ToLower(name), "_") {
					found = found || slices.Contains(healthWords, w)
				}
			}
			return nil
		})
		return nil
	})
	return found
}

// mentionsTerminated tells whether an expression holds the literal
// "terminated".
func mentionsTerminated(e hclsyntax.Expression) bool {
	found := false
	_ = hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		if lit, ok := n.(*hclsyntax.TemplateExpr); ok && lit.IsStringLiteral() {
			if v, ok := literal(lit); ok && !v.IsNull() && strings.EqualFold(v.AsString(), "terminated") {
				found = true
			}
		}
		return nil
	})
	return found
}

func stepNames(t hcl.Traversal) []string {
	var names []string
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			names = append(names, s.Name)
		case hcl.TraverseAttr:
			names = append(names, s.Name)
		}
	}
	return names
}

// keyName reads an object key: a bare name or a literal string.
func keyName(e hcl.Expression) string {
	if k := hcl.ExprAsKeyword(e); k != "" {
		return k
	}
	if v, ok := literal(e); ok && !v.IsNull() && v.Type().FriendlyName() == "string" {
		return v.AsString()
	}
	return ""
}
