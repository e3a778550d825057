package machinetemplate

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestResolve(t *testing.T) {
	const img = "reg/captf/machine:1"
	arm := &infrav1.NodeInfo{Architecture: "arm64", OperatingSystem: "linux"}
	down := errors.New("registry unreachable")
	labels := func(kv ...string) Inspection {
		in := Inspection{Image: img, Labels: map[string]string{}}
		for i := 0; i < len(kv); i += 2 {
			in.Labels[kv[i]] = kv[i+1]
		}
		return in
	}
	cases := []struct {
		name     string
		spec     corev1.ResourceList
		in       Inspection
		before   infrav1.TerraformMachineTemplateStatus
		capacity corev1.ResourceList
		source   string
		nodeInfo *infrav1.NodeInfo
		status   metav1.ConditionStatus
		reason   string
		message  string
		changed  bool
		retry    bool
	}{
		{name: "the image's labels", in: labels(LabelCapacity, `{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}`, LabelNodeInfo, `{"architecture":"arm64","operatingSystem":"linux"}`),
			capacity: list("cpu", "4", "memory", "16Gi", "nvidia.com/gpu", "1"), source: "Image", nodeInfo: arm, status: "True", reason: infrav1.CapacityResolvedReason,
			message: "cpu=4, memory=16Gi, nvidia.com/gpu=1", changed: true},
		{name: "spec.capacity replaces the label wholesale", spec: list("cpu", "8"), in: labels(LabelCapacity, `{"cpu":"4","memory":"16Gi"}`, LabelNodeInfo, `{"architecture":"arm64","operatingSystem":"linux"}`),
			capacity: list("cpu", "8"), source: "Spec", nodeInfo: arm, status: "True", reason: infrav1.CapacityResolvedReason, message: "spec.capacity", changed: true},
		{name: "spec.capacity with the image unreadable keeps the last nodeInfo", spec: list("cpu", "8"), in: Inspection{Image: img, Err: down},
			before: infrav1.TerraformMachineTemplateStatus{NodeInfo: arm}, capacity: list("cpu", "8"), source: "Spec", nodeInfo: arm,
			status: "True", reason: infrav1.CapacityResolvedReason, message: "image not inspected (registry unreachable)", changed: true, retry: true},
		{name: "nothing declared", in: labels(), source: "Image", status: "True", reason: infrav1.CapacityNotDeclaredReason, message: "cannot scale a MachineDeployment of this template from zero"},
		{name: "an empty capacity object", in: labels(LabelCapacity, `{}`), source: "Image", status: "False", reason: infrav1.CapacityLabelInvalidReason, message: "empty object"},
		{name: "a quantity that does not parse", in: labels(LabelCapacity, `{"cpu":"four"}`), source: "Image", status: "False", reason: infrav1.CapacityLabelInvalidReason, message: `the quantity of cpu, "four", does not parse`},
		{name: "a resource name that is not one", in: labels(LabelCapacity, `{"no spaces":"1"}`), source: "Image", status: "False", reason: infrav1.CapacityLabelInvalidReason, message: `"no spaces" is not a resource name`},
		{name: "capacity that is not JSON", in: labels(LabelCapacity, `cpu=4`), source: "Image", status: "False", reason: infrav1.CapacityLabelInvalidReason, message: "not a JSON object"},
		{name: "an unknown node-info key keeps the last nodeInfo", in: labels(LabelCapacity, `{"cpu":"4"}`, LabelNodeInfo, `{"arch":"arm64"}`),
			before: infrav1.TerraformMachineTemplateStatus{NodeInfo: arm}, source: "Image", nodeInfo: arm, status: "False", reason: infrav1.CapacityLabelInvalidReason, message: `unknown key "arch"`},
		{name: "an architecture outside the four", in: labels(LabelNodeInfo, `{"architecture":"riscv64"}`), source: "Image", status: "False", reason: infrav1.CapacityLabelInvalidReason, message: `architecture "riscv64" is not one of`},
		{name: "an unreadable image keeps what was resolved and retries", in: Inspection{Image: img, Err: down},
			before:   infrav1.TerraformMachineTemplateStatus{Capacity: list("cpu", "2"), NodeInfo: arm, CapacitySource: &infrav1.CapacitySource{Source: "Image", Image: "reg/captf/machine:0"}},
			capacity: list("cpu", "2"), source: "Image", nodeInfo: arm, status: "False", reason: infrav1.ImageInspectFailedReason, message: "registry unreachable", retry: true},
		{name: "a spec.capacity taken away is not kept while the image cannot be read", in: Inspection{Image: img, Err: down},
			before: infrav1.TerraformMachineTemplateStatus{Capacity: list("cpu", "8"), CapacitySource: &infrav1.CapacitySource{Source: "Spec", Image: img}},
			status: "False", reason: infrav1.ImageInspectFailedReason, message: "registry unreachable", changed: true, retry: true},
		{name: "a registry error of any length is cut", in: Inspection{Image: img, Err: errors.New(strings.Repeat("é", 4000))},
			status: "False", reason: infrav1.ImageInspectFailedReason, message: "...", retry: true},
		{name: "the same answer changes nothing", in: labels(LabelCapacity, `{"cpu":"2"}`, LabelNodeInfo, `{"architecture":"arm64","operatingSystem":"linux"}`),
			before:   infrav1.TerraformMachineTemplateStatus{Capacity: list("cpu", "2"), NodeInfo: arm},
			capacity: list("cpu", "2"), source: "Image", nodeInfo: arm, status: "True", reason: infrav1.CapacityResolvedReason, message: "cpu=2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Resolve(tc.spec, tc.in, tc.before)
			c := got.Condition
			if c.Type != infrav1.CapacityResolvedCondition || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
				t.Errorf("condition %s=%s %s %q, want %s %s containing %q", c.Type, c.Status, c.Reason, c.Message, tc.status, tc.reason, tc.message)
			}
			if !equalList(got.Capacity, tc.capacity) {
				t.Errorf("capacity %v, want %v", got.Capacity, tc.capacity)
			}
			if src := got.CapacitySource; (src == nil) != (tc.source == "") || src != nil && string(src.Source) != tc.source {
				t.Errorf("capacitySource %+v, want %q", src, tc.source)
			}
			if (got.NodeInfo == nil) != (tc.nodeInfo == nil) || got.NodeInfo != nil && *got.NodeInfo != *tc.nodeInfo {
				t.Errorf("nodeInfo %+v, want %+v", got.NodeInfo, tc.nodeInfo)
			}
			if len(c.Message) > maxMessage || !utf8.ValidString(c.Message) {
				t.Errorf("the message has %d bytes (at most %d), valid UTF-8 %v", len(c.Message), maxMessage, utf8.ValidString(c.Message))
			}
			if got.Changed != tc.changed || got.Retry != tc.retry {
				t.Errorf("changed %v retry %v, want %v %v", got.Changed, got.Retry, tc.changed, tc.retry)
			}
		})
	}
}

func equalList(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
