package imagecheck

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// The labels of the image contract the checks read (internal/imagemeta
// and the machine template controller read the same; they are not
// imported, for they would bring a Kubernetes client into the linter).
const (
	labelRole     = "io.captf.role"
	labelContract = "io.captf.contract"
	labelRuntime  = "io.captf.runtime"
	labelCapacity = "io.captf.capacity"
	labelNodeInfo = "io.captf.node-info"
)

// The runtimes labelRuntime names.
const (
	runtimeTofu      = "tofu"
	runtimeTerraform = "terraform"
)

// architectures are the node architectures io.captf.node-info may name.
var architectures = []string{"amd64", "arm64", "s390x", "ppc64le"}

// sizeVariables are the variable names that say a machine module takes
// its size as an input (AWS, Azure, Google, OCI, OpenStack and others).
var sizeVariables = []string{
	"instance_type", "vm_size", "machine_type", "shape", "flavor", "flavor_name", "flavor_id",
	"server_type", "instance_size", "node_size", "ocpus", "memory_gib",
}

// checkLabels runs image/label-role, image/label-contract,
// image/label-capacity and image/capacity-size-variable.
func checkLabels(role contract.Role, wantContract string, labels map[string]string, variables []string) []lint.Finding {
	var findings []lint.Finding
	add := func(id string, sev lint.Severity, format string, args ...any) {
		findings = append(findings, lint.Finding{ID: id, Severity: sev, File: lint.Whole, Message: fmt.Sprintf(format, args...)})
	}
	switch got := labels[labelRole]; {
	case got == "":
		add("image/label-role", lint.Info, "the image has no %s label: add LABEL %s=%s (it only informs readers: the kind that references the image decides the role)", labelRole, labelRole, role)
	case got != string(role):
		add("image/label-role", lint.Error, "label %s is %q, but the image is checked as a %s module: fix the label, or lint with --role=%s if the module plays that role", labelRole, got, role, got)
	}
	switch got := labels[labelContract]; {
	case got == "":
		add("image/label-contract", lint.Info, "the image has no %s label: build it FROM a CAPTF base image, or add LABEL %s=%s", labelContract, labelContract, wantContract)
	case got != wantContract:
		add("image/label-contract", lint.Warning, "label %s is %q, but the image is checked against contract %s: fix the label, or lint with --contract=%s", labelContract, got, wantContract, got)
	}
	capacity, nodeInfo := labels[labelCapacity], labels[labelNodeInfo]
	if role != contract.RoleMachine {
		for _, l := range []string{labelCapacity, labelNodeInfo} {
			if labels[l] != "" {
				add("image/label-capacity", lint.Info, "label %s is set, but only a machine image's is read: a %s image's is ignored", l, role)
			}
		}
		return findings
	}
	switch problem := capacityProblem(capacity); {
	case capacity == "":
		add("image/label-capacity", lint.Info, "the image has no %s label: the cluster autoscaler cannot scale a MachineDeployment of this module from zero unless its TerraformMachineTemplate sets spec.capacity; add the label when the machine's size is fixed", labelCapacity)
	case problem != "":
		add("image/label-capacity", lint.Error, "label %s %s: the machine template controller rejects it; fix it, as a JSON object such as {\"cpu\":\"4\",\"memory\":\"16Gi\"}", labelCapacity, problem)
	}
	switch problem := nodeInfoProblem(nodeInfo); {
	case nodeInfo == "":
		add("image/label-capacity", lint.Info, "the image has no %s label: add one such as {\"architecture\":\"amd64\",\"operatingSystem\":\"linux\"} so that the cluster autoscaler knows the nodes' platform", labelNodeInfo)
	case problem != "":
		add("image/label-capacity", lint.Error, "label %s %s: the machine template controller rejects it; fix it, as a JSON object such as {\"architecture\":\"amd64\",\"operatingSystem\":\"linux\"}", labelNodeInfo, problem)
	}
	if capacity != "" {
		for _, v := range variables {
			if slices.Contains(sizeVariables, v) {
				add("image/capacity-size-variable", lint.Warning, "the image declares its capacity in label %s, but the module takes its size as variable %s: a template that sets another size would report the wrong capacity; remove the label and let users set TerraformMachineTemplate spec.capacity", labelCapacity, v)
				break
			}
		}
	}
	return findings
}

// capacityProblem says why io.captf.capacity is not a JSON object of
// resource names to quantity strings; "" when it is (or absent).
func capacityProblem(raw string) string {
	if raw == "" {
		return ""
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return "is not a JSON object of resource names to quantity strings"
	}
	if len(m) == 0 {
		return "is an empty object (declare at least one resource, or remove the label)"
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Sprintf("names %q, which is not a resource name (%s)", k, strings.Join(errs, "; "))
		}
		if _, err := resource.ParseQuantity(m[k]); err != nil {
			return fmt.Sprintf("gives %s the quantity %q, which does not parse", k, m[k])
		}
	}
	return ""
}

// nodeInfoProblem says why io.captf.node-info is not an object of
// architecture and operatingSystem; "" when it is (or absent).
func nodeInfoProblem(raw string) string {
	if raw == "" {
		return ""
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return "is not a JSON object of strings"
	}
	if len(m) == 0 {
		return "is an empty object (give architecture, operatingSystem or both)"
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch v := m[k]; k {
		case "architecture":
			if !slices.Contains(architectures, v) {
				return fmt.Sprintf("names architecture %q, not one of %s", v, strings.Join(architectures, ", "))
			}
		case "operatingSystem":
			if v == "" || len(v) > 64 {
				return "has an operatingSystem that is not 1 to 64 characters long"
			}
		default:
			return fmt.Sprintf("has the unknown key %q (want architecture and operatingSystem)", k)
		}
	}
	return ""
}
