package inputs

import (
	"context"
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
)

// Variables are an object's user variables: their values, and which of
// them are sensitive (from a Secret).
type Variables struct {
	Values    map[string]json.RawMessage
	Sensitive map[string]bool
}

// ReadVariables merges an object's spec.variables (inline) and its
// variablesFrom sources (refs), read live through r in namespace ns.
func ReadVariables(ctx context.Context, r client.Reader, ns string, inline *apiextensionsv1.JSON, refs []infrav1.VariablesFromSource) (Variables, error) {
	sources, err := ReadSources(ctx, r, ns, refs)
	if err != nil {
		return Variables{}, err
	}
	values, sensitive, err := MergeVariables(inline, sources)
	return Variables{Values: values, Sensitive: sensitive}, err
}

// Rendered are the files and hashes of one rendering of an object's
// inputs.
type Rendered struct {
	MainTF, Tfvars []byte
	Hash           string
	// Approval and Exports are a pool's approval hash (the inputs hash
	// without bootstrap_data) and the hash of the cluster exports its
	// inputs render; "" unless asked for.
	Approval, Exports string
}

// Render builds the files of role's tfvars (roleTfvars) and the user's
// variables for image, and hashes them with key; a pool that guards its
// exports (guardsExports) gets its approval and exports hashes too.
func Render(key []byte, role contract.Role, image string, roleTfvars []byte, vars Variables, guardsExports bool) (Rendered, error) {
	var r Rendered
	var err error
	if r.MainTF, r.Tfvars, err = Files(role, roleTfvars, vars.Values, vars.Sensitive); err != nil {
		return r, err
	}
	if r.Hash, err = Hash(key, role, image, roleTfvars, vars.Values, vars.Sensitive); err != nil {
		return r, err
	}
	if guardsExports {
		if r.Approval, err = ApprovalHash(key, role, image, roleTfvars, vars.Values, vars.Sensitive); err != nil {
			return r, err
		}
		r.Exports = ExportsHash(roleTfvars)
	}
	return r, nil
}
