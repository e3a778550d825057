package inputs

import (
	"encoding/json"
	"errors"
	"fmt"

	"captf.io/captf/pkg/contract"
)

// Files assembles the two files of a run from a role's rendered contract
// inputs (RoleInputs.Tfvars) and its merged user variables: main.tf.json
// (Root) and terraform.tfvars.json, the contract inputs plus one key per
// user variable. Without user variables the tfvars are the role inputs,
// byte for byte. A user variable named like one of the role's contract
// inputs is an *InvalidVariableError.
func Files(role contract.Role, roleTfvars []byte, values map[string]json.RawMessage, sensitive map[string]bool) (mainTF, tfvars []byte, err error) {
	names, err := contract.InputNames(role)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range names {
		if _, clash := values[name]; clash {
			return nil, nil, &InvalidVariableError{Source: "the merged variables", Key: name, Reason: fmt.Sprintf("is a contract input of the %s role", role)}
		}
	}
	mainTF, err = Root(role, UserVariables(values, sensitive))
	if err != nil {
		return nil, nil, err
	}
	if len(values) == 0 {
		return mainTF, roleTfvars, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(roleTfvars, &doc); err != nil || doc == nil {
		return nil, nil, errors.New("role inputs are not a JSON object")
	}
	for name, v := range values {
		doc[name] = v
	}
	tfvars, err = encode(doc)
	if err != nil {
		return nil, nil, err
	}
	return mainTF, tfvars, nil
}
