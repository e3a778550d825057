package machinetemplate

import (
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
)

func TestVariables(t *testing.T) {
	const schema = `{"type":"object","properties":{"size":{"enum":["small","large"]},"zone":{"type":"string"}},"additionalProperties":false}`
	with := func(s string) Inspection {
		return Inspection{Image: "reg/m:1", Labels: map[string]string{LabelVariablesSchema: s}}
	}
	vars := func(raw string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(raw)} }
	zone := []inputs.Source{{Kind: inputs.SourceSecret, Name: "zone", Found: true, Labelled: true, Data: map[string][]byte{"zone": []byte("eu-secret-9d1")}}}
	missing := []inputs.Source{{Kind: inputs.SourceConfigMap, Name: "later"}}
	cases := []struct {
		name    string
		in      Inspection
		inline  *apiextensionsv1.JSON
		sources []inputs.Source
		status  metav1.ConditionStatus
		reason  string
		message string
		pending bool
	}{
		{name: "an unreadable image", in: Inspection{Image: "reg/m:1", Err: errors.New("registry down")}, status: "Unknown", reason: infrav1.VariablesSchemaUnavailableReason, message: "registry down"},
		{name: "no schema", in: Inspection{Image: "reg/m:1"}, status: "True", reason: infrav1.VariablesSchemaNotDeclaredReason, message: "declares no io.captf.variables-schema"},
		{name: "variables that match, a source's included", in: with(schema), inline: vars(`{"size":"small"}`), sources: zone, status: "True", reason: infrav1.VariablesValidReason},
		{name: "a value outside the enum", in: with(schema), inline: vars(`{"size":"huge-secret-4b7"}`), status: "False", reason: infrav1.VariablesRejectedReason, message: "variable size:"},
		{name: "a variable the schema does not know", in: with(schema), inline: vars(`{"region":"x"}`), status: "False", reason: infrav1.VariablesRejectedReason, message: "region"},
		{name: "a source not there yet", in: with(schema), inline: vars(`{}`), sources: missing, status: "Unknown", reason: infrav1.VariablesSourcePendingReason, message: "later", pending: true},
		{name: "a schema that is not one", in: with(`{"type":"nonsense"}`), inline: vars(`{}`), status: "False", reason: infrav1.VariablesRejectedReason, message: "not a usable JSON Schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, pending := Variables(tc.in, tc.inline, tc.sources)
			if c.Type != infrav1.VariablesValidCondition || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) || pending != tc.pending {
				t.Errorf("%s=%s %s %q pending %v; want %s %s containing %q, pending %v", c.Type, c.Status, c.Reason, c.Message, pending, tc.status, tc.reason, tc.message, tc.pending)
			}
			for _, secret := range []string{"huge-secret-4b7", "eu-secret-9d1"} {
				if strings.Contains(c.Message, secret) {
					t.Errorf("the message quotes a value: %s", c.Message)
				}
			}
		})
	}
}
