package webhooks

import (
	"bytes"
	"encoding/json"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
)

// validateVariables checks spec.variables: a JSON object whose keys are
// variable names that collide with nothing the generated root passes.
// Errors name the key, never its value.
func validateVariables(role contract.Role, vars *apiextensionsv1.JSON, path *field.Path) field.ErrorList {
	if vars == nil || len(vars.Raw) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(vars.Raw))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return field.ErrorList{field.Invalid(path, "(value not shown)", "must be a JSON object of variable name to value")}
	}
	names, err := contract.InputNames(role)
	if err != nil {
		return field.ErrorList{field.InternalError(path, err)}
	}
	reserved := map[string]bool{}
	for _, n := range names {
		reserved[n] = true
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs field.ErrorList
	for _, k := range keys {
		p := path.Key(k)
		rule := inputs.CheckVariableName(k)
		switch {
		case rule == inputs.NameMalformed:
			errs = append(errs, field.Invalid(p, k, "a variable name starts with a letter or _ and holds only letters, digits, _ and -"))
		case rule == inputs.NameReservedPrefix:
			errs = append(errs, field.Forbidden(p, "names starting with captf_ are reserved for the module contract; rename the variable"))
		case reserved[k]:
			errs = append(errs, field.Forbidden(p, "is a contract input of the "+string(role)+" role, which CAPTF renders itself; rename the variable"))
		case rule == inputs.NameMetaArgument:
			errs = append(errs, field.Forbidden(p, "is a module meta-argument and cannot be a variable name; rename the variable"))
		}
	}
	return errs
}

// variablesChanged reports a change of spec.variables.
func variablesChanged(oldVars, newVars *apiextensionsv1.JSON) bool {
	if oldVars == nil || newVars == nil {
		return oldVars != newVars
	}
	return !bytes.Equal(oldVars.Raw, newVars.Raw)
}
