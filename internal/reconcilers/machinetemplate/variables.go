package machinetemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
)

// maxViolations bounds the violations a VariablesRejected message lists.
const maxViolations = 8

// Variables decides VariablesValid: the template's variables (spec.variables
// merged with its variablesFrom sources, as a machine's Job renders them)
// against the JSON Schema the image declares in io.captf.variables-schema.
// Nothing of a value ever reaches the message: a violation names the
// variable and the rule. pending reports a variables source not readable
// yet (retried in 30 s).
func Variables(in Inspection, inline *apiextensionsv1.JSON, sources []inputs.Source) (cond metav1.Condition, pending bool) {
	set := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: infrav1.VariablesValidCondition, Status: status, Reason: reason, Message: cut(fmt.Sprintf(format, args...), maxMessage)}
	}
	if in.Err != nil {
		return set(metav1.ConditionUnknown, infrav1.VariablesSchemaUnavailableReason, "Could not read image %s: %s", in.Image, in.Err), false
	}
	schema := in.Labels[LabelVariablesSchema]
	if schema == "" {
		return set(metav1.ConditionTrue, infrav1.VariablesSchemaNotDeclaredReason, "Image %s declares no %s: the variables are checked when a machine's Job runs", in.Image, LabelVariablesSchema), false
	}
	values, _, err := inputs.MergeVariables(inline, sources)
	var notFound *inputs.SourceNotFoundError
	switch {
	case errors.As(err, &notFound):
		return set(metav1.ConditionUnknown, infrav1.VariablesSourcePendingReason, "%s; the variables are checked once it can be read", err), true
	case err != nil:
		return set(metav1.ConditionFalse, infrav1.VariablesRejectedReason, "%s", err), false
	}
	doc, err := json.Marshal(values)
	if err != nil {
		return set(metav1.ConditionFalse, infrav1.VariablesRejectedReason, "The variables cannot be rendered: %s", err), false
	}
	violations, err := contract.SchemaViolations([]byte(schema), doc)
	if err != nil {
		return set(metav1.ConditionFalse, infrav1.VariablesRejectedReason, "The %s label of image %s is not a usable JSON Schema: %s", LabelVariablesSchema, in.Image, err), false
	}
	if len(violations) == 0 {
		return set(metav1.ConditionTrue, infrav1.VariablesValidReason, "The variables match the schema of image %s", in.Image), false
	}
	parts := make([]string, 0, min(len(violations), maxViolations))
	for i, v := range violations {
		if i == maxViolations {
			parts = append(parts, fmt.Sprintf("and %d more", len(violations)-maxViolations))
			break
		}
		name := strings.TrimPrefix(v.Path, "/")
		if name == "" {
			name = "(the variables)"
		}
		parts = append(parts, "variable "+name+": "+v.Message)
	}
	return set(metav1.ConditionFalse, infrav1.VariablesRejectedReason, "The variables break the schema of image %s: %s", in.Image, strings.Join(parts, "; ")), false
}
