package contract

import (
	"encoding/json"
	"fmt"
	"sort"
)

// InputNames returns the names of the role's contract inputs (the keys of
// its terraform.tfvars.json), sorted.
func InputNames(role Role) ([]string, error) {
	return propertyNames(string(role) + "-inputs.json")
}

// OutputNames returns the names of the role's contract outputs (the
// outputs the generated root re-exports), sorted.
func OutputNames(role Role) ([]string, error) {
	return propertyNames(string(role) + "-outputs.json")
}

// propertyNames reads the top-level properties of a schema that are
// required: for inputs and outputs alike, every contract name is required
// (an input the controller never renders for the role is optional).
func propertyNames(file string) ([]string, error) {
	data, err := schemaFS.ReadFile("schemas/" + file)
	if err != nil {
		return nil, fmt.Errorf("no contract schema %s", file)
	}
	var s struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("schema %s: %w", file, err)
	}
	names := append([]string(nil), s.Required...)
	sort.Strings(names)
	return names, nil
}

// NullableInputs returns the role's inputs whose value may be null. A root
// module variable given null counts as unset, so the generated root
// declares these with a null default.
func NullableInputs(role Role) (map[string]bool, error) {
	return nullable(string(role) + "-inputs.json")
}

// NullableOutputs returns the role's outputs whose value may be null.
func NullableOutputs(role Role) (map[string]bool, error) {
	return nullable(string(role) + "-outputs.json")
}

// nullable returns the top-level properties of a schema that accept null:
// by type, by an alternative, or by having no type at all.
func nullable(file string) (map[string]bool, error) {
	data, err := schemaFS.ReadFile("schemas/" + file)
	if err != nil {
		return nil, fmt.Errorf("no contract schema %s", file)
	}
	var s struct {
		Properties map[string]struct {
			Type  any    `json:"type"`
			Ref   string `json:"$ref"`
			Enum  []any  `json:"enum"`
			Const any    `json:"const"`
			AnyOf []struct {
				Type any `json:"type"`
			} `json:"anyOf"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("schema %s: %w", file, err)
	}
	found := map[string]bool{}
	for name, p := range s.Properties {
		unconstrained := p.Type == nil && len(p.AnyOf) == 0 && p.Ref == "" && p.Enum == nil && p.Const == nil
		if allowsNull(p.Type) || unconstrained {
			found[name] = true
		}
		for _, alt := range p.AnyOf {
			if allowsNull(alt.Type) {
				found[name] = true
			}
		}
	}
	return found, nil
}

func allowsNull(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "null"
	case []any:
		for _, x := range t {
			if x == "null" {
				return true
			}
		}
	}
	return false
}
