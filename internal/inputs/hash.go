package inputs

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"captf.io/captf/internal/canonjson"
	"captf.io/captf/pkg/contract"
)

// HashScheme is the scheme of the inputs hash, its value's prefix.
const HashScheme = "h3"

// digestScheme is the scheme of the unkeyed digest the keyed hash is
// taken over: the inputs hash of releases before h3, which a reader of a
// Job or a TerraformPlan could test guesses of a secret input against.
// It is never written anywhere; a stored one is rekeyed (Rekey).
const digestScheme = "h2"

// MinKeyBytes is the shortest key the inputs hash accepts.
const MinKeyBytes = 32

// Hash returns the inputs hash of a run:
//
//	"h3:" + hex(HMAC-SHA256(key, digest))
//
// where key is the object's plan key and digest is "h2:" and the
// lowercase hex SHA-256 of a canonical document (encoded as described in
// canonical.go):
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
// The digest is the inputs hash of earlier releases: keying it lets a
// stored one be rekeyed without the inputs it was taken over (Rekey), and
// keeps anyone without the key from confirming a guess of a secret input.
//
// A fractional or exponent number anywhere makes the inputs unhashable: a
// *NumberError (FromExports when it came from captf_cluster_outputs).
func Hash(key []byte, role contract.Role, image string, tfvars []byte, userVars map[string]json.RawMessage, sensitive map[string]bool) (string, error) {
	return keyedDigest(key, role, image, tfvars, userVars, sensitive, false)
}

// ApprovalHash is Hash without bootstrap_data: a machine pool's bootstrap
// token rotates every few minutes, and an approval must survive that.
func ApprovalHash(key []byte, role contract.Role, image string, tfvars []byte, userVars map[string]json.RawMessage, sensitive map[string]bool) (string, error) {
	return keyedDigest(key, role, image, tfvars, userVars, sensitive, true)
}

// Rekey returns a stored inputs or approval hash in the current scheme:
// an h2 digest written by an earlier release becomes the h3 hash of the
// same inputs under key; any other value (h3, empty, unknown) is returned
// as it is. Compare stored hashes through it, never write its h2 input
// anywhere.
func Rekey(key []byte, stored string) string {
	if len(key) < MinKeyBytes || !strings.HasPrefix(stored, digestScheme+":") {
		return stored
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(stored))
	return HashScheme + ":" + hex.EncodeToString(mac.Sum(nil))
}

func keyedDigest(key []byte, role contract.Role, image string, tfvars []byte, userVars map[string]json.RawMessage, sensitive map[string]bool, approval bool) (string, error) {
	if len(key) < MinKeyBytes {
		return "", fmt.Errorf("the inputs hash key has %d bytes, it needs at least %d", len(key), MinKeyBytes)
	}
	d, err := Digest(role, image, tfvars, userVars, sensitive, approval)
	if err != nil {
		return "", err
	}
	return Rekey(key, d), nil
}

// Digest is the unkeyed h2 digest of the inputs (see Hash), without
// bootstrap_data when approval is set: what Hash keys, and what a reader
// who guesses every input can compute. For migration and tests; never
// write it anywhere.
func Digest(role contract.Role, image string, tfvars []byte, userVars map[string]json.RawMessage, sensitive map[string]bool, approval bool) (string, error) {
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
		"scheme":   digestScheme,
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
	return digestScheme + ":" + hex.EncodeToString(sum[:]), nil
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
