package inputs_test

import (
	"encoding/json"
	"testing"

	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
)

type root struct {
	Terraform struct {
		Backend map[string]json.RawMessage `json:"backend"`
	} `json:"terraform"`
	Variable map[string]map[string]any `json:"variable"`
	Module   map[string]map[string]any `json:"module"`
	Output   map[string]struct {
		Value     string `json:"value"`
		Sensitive bool   `json:"sensitive"`
	} `json:"output"`
}

func TestRootOfEveryRole(t *testing.T) {
	for _, role := range contract.Roles {
		t.Run(string(role), func(t *testing.T) {
			data, err := inputs.Root(role, []inputs.UserVariable{{Name: "size"}, {Name: "api_key", Sensitive: true}})
			if err != nil {
				t.Fatal(err)
			}
			again, _ := inputs.Root(role, []inputs.UserVariable{{Name: "api_key", Sensitive: true}, {Name: "size"}})
			if string(data) != string(again) {
				t.Error("the same inputs render different bytes")
			}
			var r root
			if err := json.Unmarshal(data, &r); err != nil {
				t.Fatal(err)
			}
			if _, ok := r.Terraform.Backend["kubernetes"]; !ok || len(r.Terraform.Backend) != 1 {
				t.Errorf("backend %v, want only a partial kubernetes backend", r.Terraform.Backend)
			}
			names, _ := contract.InputNames(role)
			nullable, _ := contract.NullableInputs(role)
			mod := r.Module["role"]
			if mod["source"] != inputs.ModuleSource {
				t.Errorf("module source %v", mod["source"])
			}
			for _, n := range append(names, "size", "api_key") {
				if mod[n] != "${var."+n+"}" {
					t.Errorf("module argument %s = %v", n, mod[n])
				}
				v, ok := r.Variable[n]
				if !ok {
					t.Errorf("no root variable %s", n)
				}
				if _, hasDefault := v["default"]; hasDefault != nullable[n] {
					t.Errorf("variable %s: default %v, nullable %v", n, v["default"], nullable[n])
				}
				wantSensitive := n == "bootstrap_data" || n == "api_key"
				if (v["sensitive"] == true) != wantSensitive {
					t.Errorf("variable %s sensitive = %v", n, v["sensitive"])
				}
			}
			if len(r.Variable) != len(names)+2 || len(mod) != len(names)+3 {
				t.Errorf("%d variables and %d module arguments for %d inputs + 2 user variables", len(r.Variable), len(mod), len(names))
			}
			outs, _ := contract.OutputNames(role)
			for _, o := range outs {
				if got := r.Output[o]; got.Value != "${module.role."+o+"}" || !got.Sensitive {
					t.Errorf("output %s = %+v, want a sensitive re-export", o, got)
				}
			}
		})
	}
}

func TestRootRefusesUserVariablesNamedLikeContractInputs(t *testing.T) {
	if _, err := inputs.Root(contract.RoleMachine, []inputs.UserVariable{{Name: "machine_name"}}); err == nil {
		t.Error("a user variable named machine_name was accepted")
	}
}
