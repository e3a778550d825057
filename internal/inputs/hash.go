package inputs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"captf.io/captf/internal/canonjson"
	"captf.io/captf/pkg/contract"
)

// HashScheme is the scheme of the inputs hash, its value's prefix.
const HashScheme = "h2"

// Hash returns the inputs hash of a run, "h2:" and the lowercase hex
// SHA-256 of a canonical document (encoded as described in canonical.go):
//
//	{"contract":"v1alpha1",
//	 "image":<spec.source.image as written>,
//	 "inputs":<the role's contract inputs>,
//	 "role":"cluster"|"machine"|"machinepool",
//	 "scheme":"h2",
//	 "variables":{<name>:{"sensitive":<bool>,"value":<value>},...}}
//
// where inputs are tfvars, the role's rendered contract inputs
// (RoleInputs.Tfvars, not the file Files merges user variables into), less
// replicas for a machinepool whose autoscaling is enabled, and the
// variables member is present only when there are user variables (an
// object without any hashes as it did before variables existed). Member
// order above is the canonical (sorted) order; there is no whitespace.
//
// A fractional or exponent number anywhere makes the inputs unhashable: a
// *NumberError (FromExports when it came from captf_cluster_outputs).
func Hash(role contract.Role, image string, tfvars []byte, userVars map[string]json.RawMessage, sensitive map[string]bool) (string, error) {
	return hash(role, image, tfvars, userVars, sensitive, false)
}

// ApprovalHash is Hash without bootstrap_data: a machine pool's bootstrap
// token rotates every few minutes, and an approval must survive that.
func ApprovalHash(role contract.Role, image string, tfvars []byte, userVars map[string]json.RawMessage, sensitive map[string]bool) (string, error) {
	return hash(role, image, tfvars, userVars, sensitive, true)
}

func hash(role contract.Role, image string, tfvars []byte, userVars map[string]json.RawMessage, sensitive map[string]bool, approval bool) (string, error) {
	inputs, err := hashedInputs(role, tfvars)
	if err != nil {
		return "", err
	}
	if approval {
		delete(inputs, "bootstrap_data")
	}
	doc := map[string]any{
		"contract": contract.Version,
		"image":    image,
		"inputs":   inputs,
		"role":     string(role),
		"scheme":   HashScheme,
	}
	if len(userVars) > 0 {
		vars := make(map[string]any, len(userVars))
		for name, raw := range userVars {
			v, err := decodeJSON(raw)
			if err != nil {
				return "", fmt.Errorf("variable %q is not valid JSON", name)
			}
			vars[name] = map[string]any{"sensitive": sensitive[name], "value": v}
		}
		doc["variables"] = vars
	}
	var buf bytes.Buffer
	if err := canonjson.Write(&buf, doc, canonjson.IntegersOnly); err != nil {
		return "", numberError(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return HashScheme + ":" + hex.EncodeToString(sum[:]), nil
}

// hashedInputs decodes the role inputs and drops what the hash excludes.
func hashedInputs(role contract.Role, tfvars []byte) (map[string]any, error) {
	names, err := contract.InputNames(role)
	if err != nil {
		return nil, err
	}
	v, err := decodeJSON(tfvars)
	if err != nil {
		return nil, fmt.Errorf("role inputs: %w", err)
	}
	inputs, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("role inputs are not a JSON object")
	}
	for key := range inputs {
		if !slices.Contains(names, key) {
			return nil, fmt.Errorf("%q is not a contract input of the %s role: hash the role inputs, not the file with user variables", key, role)
		}
	}
	if role == contract.RoleMachinePool {
		if scaling, ok := inputs["autoscaling"].(map[string]any); ok && scaling["enabled"] == true {
			delete(inputs, "replicas")
		}
	}
	return inputs, nil
}

// numberError turns the path of a number within the hashed document into
// the input or variable it belongs to.
func numberError(err error) error {
	var n *canonjson.PathError
	if !errors.As(err, &n) || !errors.Is(err, ErrNonInteger) {
		return err
	}
	path := n.Path
	e := &NumberError{}
	switch {
	case len(path) >= 3 && path[0] == "variables": // variables/<name>/value/...
		e.Variable = path[1]
		e.Pointer = pointerOf(path[3:])
	case len(path) >= 2 && path[0] == "inputs": // inputs/<key>/...
		e.Input = path[1]
		e.Pointer = pointerOf(path[2:])
	}
	return e
}
