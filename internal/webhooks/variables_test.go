package webhooks

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"captf.io/captf/pkg/contract"
)

func TestVariableNames(t *testing.T) {
	const secret = "s3cret-value-never-shown"
	testCases := []struct {
		name string
		role contract.Role
		raw  string
		want []string // one fragment per expected error; none = valid
	}{
		{"plain names", contract.RoleCluster, `{"region":"eu","node_count":3,"with-dash":true,"_x":null}`, nil},
		{"bad characters", contract.RoleCluster, `{"9lives":"` + secret + `","a b":1}`, []string{"spec.variables[9lives]", "spec.variables[a b]"}},
		{"captf_ prefix", contract.RoleMachine, `{"captf_region":"` + secret + `"}`, []string{"spec.variables[captf_region]", "reserved for the module contract"}},
		{"own role's contract input", contract.RoleMachine, `{"machine_name":"` + secret + `"}`, []string{"spec.variables[machine_name]", "contract input of the machine role"}},
		{"another role's input is fine", contract.RoleCluster, `{"machine_name":"x"}`, nil},
		{"meta-argument", contract.RoleMachinePool, `{"count":2,"for_each":{}}`, []string{"spec.variables[count]", "spec.variables[for_each]", "meta-argument"}},
		{"not an object", contract.RoleCluster, `["` + secret + `"]`, []string{"spec.variables", "JSON object"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateVariables(tc.role, &apiextensionsv1.JSON{Raw: []byte(tc.raw)}, field.NewPath("spec", "variables"))
			if len(tc.want) == 0 {
				if len(errs) != 0 {
					t.Fatalf("valid variables refused: %v", errs)
				}
				return
			}
			msg := errs.ToAggregate().Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, secret) {
				t.Errorf("the error shows a variable's value: %s", msg)
			}
		})
	}
}
