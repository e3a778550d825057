package inputs

import (
	"encoding/json"
	"fmt"
	"sort"

	"captf.io/captf/pkg/contract"
)

// ModuleSource is where the generated root finds the image's module:
// /captf/work/root -> /captf/module. A local path, so init never fetches it.
const ModuleSource = "../../module"

// UserVariable is a user variable the root passes to the module.
type UserVariable struct {
	Name string
	// Sensitive is true when the winning value came from a Secret.
	Sensitive bool
}

// Root renders main.tf.json for a role: every contract input of the role
// and every user variable becomes a root variable (untyped: the module's
// own declaration types it) and an argument of module "role"; bootstrap
// data and Secret-sourced user variables are declared sensitive; inputs the
// contract allows to be null default to null; every contract output is
// re-exported, sensitive. The output is deterministic.
func Root(role contract.Role, user []UserVariable) ([]byte, error) {
	inputs, err := contract.InputNames(role)
	if err != nil {
		return nil, err
	}
	nullable, err := contract.NullableInputs(role)
	if err != nil {
		return nil, err
	}
	outputs, err := contract.OutputNames(role)
	if err != nil {
		return nil, err
	}
	variables := map[string]map[string]any{}
	module := map[string]any{"source": ModuleSource}
	for _, name := range inputs {
		v := map[string]any{}
		if name == "bootstrap_data" {
			v["sensitive"] = true
		}
		if nullable[name] {
			v["default"] = nil
		}
		variables[name] = v
		module[name] = "${var." + name + "}"
	}
	sort.Slice(user, func(i, j int) bool { return user[i].Name < user[j].Name })
	for _, u := range user {
		if _, clash := variables[u.Name]; clash {
			return nil, fmt.Errorf("user variable %q is a contract input of the %s role", u.Name, role)
		}
		v := map[string]any{}
		if u.Sensitive {
			v["sensitive"] = true
		}
		variables[u.Name] = v
		module[u.Name] = "${var." + u.Name + "}"
	}
	out := map[string]any{}
	for _, name := range outputs {
		out[name] = map[string]any{"value": "${module.role." + name + "}", "sensitive": true}
	}
	root := map[string]any{
		"terraform": map[string]any{"backend": map[string]any{"kubernetes": map[string]any{}}},
		"variable":  variables,
		"module":    map[string]any{"role": module},
		"output":    out,
	}
	// encoding/json sorts map keys: the same inputs give the same bytes.
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
