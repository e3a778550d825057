package inputs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// exportsInput is the input that carries the cluster's exports to a
// machine or a pool.
const exportsInput = "captf_cluster_outputs"

// Exports returns the cluster exports a tfvars document (a role's, or a
// whole terraform.tfvars.json) renders, in canonical JSON (see Canonical),
// so that two renderings of the same exports are equal byte for byte; nil
// when it renders none or they have no canonical form.
func Exports(tfvars []byte) json.RawMessage {
	var vars map[string]json.RawMessage
	if json.Unmarshal(tfvars, &vars) != nil {
		return nil
	}
	raw, ok := vars[exportsInput]
	if !ok {
		return nil
	}
	canonical, err := Canonical(raw)
	if err != nil {
		return nil
	}
	return canonical
}

// ExportsHash is the hex SHA-256 of Exports(tfvars) ("" when it renders
// none): what captf.io/applied-cluster-outputs-hash records.
func ExportsHash(tfvars []byte) string {
	raw := Exports(tfvars)
	if raw == nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// WithExports returns a role's tfvars rendering exports instead of the
// cluster exports they render. Nothing is escaped for HTML, so the
// exports hash the same in the result.
func WithExports(roleTfvars []byte, exports json.RawMessage) ([]byte, error) {
	var vars map[string]json.RawMessage
	if err := json.Unmarshal(roleTfvars, &vars); err != nil {
		return nil, fmt.Errorf("reading the role's tfvars: %w", err)
	}
	if _, ok := vars[exportsInput]; !ok {
		return nil, fmt.Errorf("the role's tfvars render no %s", exportsInput)
	}
	vars[exportsInput] = exports
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(vars); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
