package contract

import (
	"encoding/json"
	"maps"
)

// NormalizeOutputs prepares a role's root outputs, as read from state, for
// ValidateOutputs: Terraform and OpenTofu do not store a root output whose
// value is null, so a contract output that may be null and is absent from
// state is null ("not yet known"); and an empty provider_id is null too.
// An output that may not be null stays absent, and validation reports it
// missing.
func NormalizeOutputs(role Role, outputs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	names, err := OutputNames(role)
	if err != nil {
		return nil, err
	}
	nullable, err := NullableOutputs(role)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(outputs)
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	for _, name := range names {
		if _, ok := out[name]; !ok && nullable[name] {
			out[name] = json.RawMessage("null")
		}
	}
	if string(out["provider_id"]) == `""` {
		out["provider_id"] = json.RawMessage("null")
	}
	return out, nil
}
