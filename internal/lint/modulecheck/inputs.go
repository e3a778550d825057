package modulecheck

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// clusterOutputs is the one captf_ input a module may give a default:
// the cluster role never passes it.
const clusterOutputs = "captf_cluster_outputs"

// checkInputs checks the root module's variables against the role's
// contract inputs.
func (l *loader) checkInputs(m *module, role contract.Role) error {
	names, err := contract.InputNames(role)
	if err != nil {
		return err
	}
	nullable, err := contract.NullableInputs(role)
	if err != nil {
		return err
	}
	examples, err := contract.InputExamples(role)
	if err != nil {
		return err
	}
	inContract := map[string]bool{}
	for _, n := range names {
		inContract[n] = true
		v := m.variables[n]
		if v == nil {
			if n == "captf_tags" {
				l.add(idTagsDeclared, lint.Whole, 0, `the module declares no variable "captf_tags": declare it as map(string) and apply it to every taggable resource`)
			} else {
				l.add(idInputRequired, lint.Whole, 0, fmt.Sprintf("the module declares no variable %q, which the %s role always passes: declare it (the module may ignore its value)", n, role))
			}
			continue
		}
		l.checkType(v, examples[n], nullable[n])
		switch {
		case v.def == nil || n == clusterOutputs || nullable[n] && isNull(v.def):
		case nullable[n]:
			l.add(idInputDefault, v.file.rel, v.line, fmt.Sprintf("variable %q has a default that is never used: the root always passes it, null when unset, and a null passed replaces the default: default it to null or remove the default", n))
		default:
			l.add(idInputDefault, v.file.rel, v.line, fmt.Sprintf("variable %q has a default, but the root always passes a value: remove the default", n))
		}
		if n == "bootstrap_data" && !isTrue(v.sensitive) {
			l.add(idInputSensitive, v.file.rel, v.line, `variable "bootstrap_data" is not sensitive = true: mark it sensitive so plans and logs never show it`)
		}
	}
	for _, name := range sortedKeys(m.variables) {
		v := m.variables[name]
		switch {
		case inContract[name]:
		case name == clusterOutputs && v.def != nil:
		case name == clusterOutputs:
			l.add(idInputReserved, v.file.rel, v.line, fmt.Sprintf("variable %q: the %s role never passes it, so without a default the module cannot run: give it a default or remove it", name, role))
		case strings.HasPrefix(name, "captf_"):
			l.add(idInputReserved, v.file.rel, v.line, fmt.Sprintf("variable %q: the captf_ prefix is reserved for contract inputs and %q is not one of the %s role: rename it", name, name, role))
		case v.def == nil:
			l.add(idUserVariableDefault, v.file.rel, v.line, fmt.Sprintf("variable %q has no default, so a plan fails when a user does not set it: give it a default", name))
		}
	}
	if v := m.variables["captf_tags"]; v != nil && !used(m, "captf_tags", map[string]bool{}) {
		l.add(idTagsUnused, v.file.rel, v.line, `variable "captf_tags" is never used: apply it to every taggable resource (directly or through a local module)`)
	}
	return nil
}

// checkType tells whether the declared type of v accepts every shape the
// root passes for it.
func (l *loader) checkType(v *variable, examples []json.RawMessage, nullable bool) {
	if nullable && isFalse(v.nullable) && v.def == nil {
		l.add(idInputType, v.file.rel, v.line, fmt.Sprintf("variable %q is nullable = false, but the root passes null for it: remove nullable = false", v.name))
	}
	if len(examples) == 0 {
		return
	}
	if v.typ == nil {
		l.addAt(idInputType, lint.Warning, v.file.rel, v.line, fmt.Sprintf("variable %q declares no type: declare it so the runtime checks what it receives", v.name))
		return
	}
	declared, err := typeOf(v)
	if err != nil {
		l.addAt(idInputType, lint.Warning, v.file.rel, v.line, fmt.Sprintf("variable %q: its type cannot be read (%v): write it as a type constraint", v.name, err))
		return
	}
	for _, raw := range examples {
		ty, err := ctyjson.ImpliedType(raw)
		if err != nil {
			continue
		}
		val, err := ctyjson.Unmarshal(raw, ty)
		if err != nil {
			continue
		}
		if _, err := convert.Convert(val, declared); err != nil {
			l.add(idInputType, v.file.rel, v.line, fmt.Sprintf("variable %q has type %s, which does not accept what the root passes, a %s (%v): change the type", v.name, typeexpr.TypeString(declared), typeexpr.TypeString(listed(ty)), err))
			return
		}
	}
}

// typeOf reads a variable's type constraint; a JSON file writes it as a
// string holding the native syntax.
func typeOf(v *variable) (cty.Type, error) {
	e := v.typ
	if v.file.json {
		s, diags := e.Value(nil)
		if diags.HasErrors() || s.Type() != cty.String || s.IsNull() {
			return cty.NilType, fmt.Errorf("a JSON type must be a string")
		}
		parsed, diags := hclsyntax.ParseExpression([]byte(s.AsString()), v.file.rel, e.Range().Start)
		if diags.HasErrors() {
			return cty.NilType, diags
		}
		e = parsed
	}
	ty, _, diags := typeexpr.TypeConstraintWithDefaults(e)
	if diags.HasErrors() {
		return cty.NilType, diags
	}
	return ty, nil
}

// used tells whether module m uses its variable name, directly or by
// passing it to a local module that uses it.
func used(m *module, name string, seen map[string]bool) bool {
	key := m.dir + "\x00" + name
	if seen[key] {
		return false
	}
	seen[key] = true
	for _, r := range m.refs {
		if r.name != name {
			continue
		}
		c, arg := m.localArgHolding(r)
		if c == nil || used(c.target, arg, seen) {
			return true
		}
	}
	return false
}

// localArgHolding returns the call of a local module, and the argument,
// whose expression holds r; nil when r is anywhere else.
func (m *module) localArgHolding(r ref) (*call, string) {
	for _, c := range m.calls {
		if c.target == nil {
			continue
		}
		for arg, e := range c.args {
			if contains(e.Range(), r.rng) {
				return c, arg
			}
		}
	}
	return nil, ""
}

func contains(outer, inner hcl.Range) bool {
	return inner.Filename != "" && outer.Filename == inner.Filename &&
		outer.Start.Byte <= inner.Start.Byte && inner.End.Byte <= outer.End.Byte
}

// literal evaluates an expression that references nothing.
func literal(e hcl.Expression) (cty.Value, bool) {
	if e == nil {
		return cty.NilVal, false
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return cty.NilVal, false
	}
	return v, true
}

func isNull(e hcl.Expression) bool {
	v, ok := literal(e)
	return ok && v.IsNull()
}

func isTrue(e hcl.Expression) bool  { return isBool(e, true) }
func isFalse(e hcl.Expression) bool { return isBool(e, false) }

func isBool(e hcl.Expression, want bool) bool {
	v, ok := literal(e)
	if !ok || v.IsNull() {
		return false
	}
	b, err := convert.Convert(v, cty.Bool)
	return err == nil && b.True() == want
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// listed writes the type JSON implies for a value as an author would
// declare it: a tuple of one element type as a list of it.
func listed(ty cty.Type) cty.Type {
	switch {
	case ty.IsTupleType():
		elems := ty.TupleElementTypes()
		if len(elems) == 0 {
			return cty.List(cty.DynamicPseudoType)
		}
		return cty.List(listed(elems[0]))
	case ty.IsObjectType():
		attrs := map[string]cty.Type{}
		for name, at := range ty.AttributeTypes() {
			attrs[name] = listed(at)
		}
		return cty.Object(attrs)
	}
	return ty
}
