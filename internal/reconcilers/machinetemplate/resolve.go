package machinetemplate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// The image labels this controller reads.
const (
	LabelCapacity        = "io.captf.capacity"
	LabelNodeInfo        = "io.captf.node-info"
	LabelVariablesSchema = "io.captf.variables-schema"
)

// notInspected starts the CapacityResolved message of a spec.capacity
// resolved while the image could not be read (retried).
const notInspected = "image not inspected"

// architectures are the node architectures io.captf.node-info may name.
var architectures = []string{"amd64", "arm64", "s390x", "ppc64le"}

// Inspection is what reading the template's image found.
type Inspection struct {
	// Image is the reference read.
	Image string
	// Labels are its config labels, when Err is nil.
	Labels map[string]string
	// Err says why it could not be read.
	Err error
}

// Resolved is the capacity part of the status and what to report.
type Resolved struct {
	Capacity       corev1.ResourceList
	NodeInfo       *infrav1.NodeInfo
	CapacitySource *infrav1.CapacitySource
	Condition      metav1.Condition
	// Changed: capacity or nodeInfo differ from the status before (the
	// CapacityResolved event).
	Changed bool
	// Retry: the image could not be read; try again with the backoff.
	Retry bool
}

// Resolve decides the template's capacity, nodeInfo and CapacityResolved
// from spec.capacity, the inspection and the status before: spec.capacity
// wins wholesale; else the image's io.captf.capacity label; nodeInfo comes
// from the image (kept from before when it cannot be read). An invalid
// label is reported and not retried; an unreadable image is retried.
func Resolve(spec corev1.ResourceList, in Inspection, before infrav1.TerraformMachineTemplateStatus) Resolved {
	out := Resolved{NodeInfo: before.NodeInfo}
	cond := func(status metav1.ConditionStatus, reason, format string, args ...any) {
		out.Condition = metav1.Condition{Type: infrav1.CapacityResolvedCondition, Status: status, Reason: reason, Message: cut(fmt.Sprintf(format, args...), maxMessage)}
	}
	var labelErr error
	if in.Err == nil {
		if out.NodeInfo, labelErr = nodeInfo(in.Labels[LabelNodeInfo]); labelErr != nil {
			out.NodeInfo = before.NodeInfo
		}
	}
	switch {
	case len(spec) > 0 && in.Err != nil:
		out.Capacity, out.CapacitySource = spec.DeepCopy(), &infrav1.CapacitySource{Source: "Spec", Image: in.Image}
		cond(metav1.ConditionTrue, infrav1.CapacityResolvedReason, notInspected+" (%s): capacity from spec.capacity; nodeInfo kept from the last inspection", in.Err)
		out.Retry = true
	case len(spec) > 0 && labelErr != nil:
		out.Capacity, out.CapacitySource = spec.DeepCopy(), &infrav1.CapacitySource{Source: "Spec", Image: in.Image}
		cond(metav1.ConditionTrue, infrav1.CapacityResolvedReason, "Capacity from spec.capacity; image %s: %s", in.Image, labelErr)
	case len(spec) > 0:
		out.Capacity, out.CapacitySource = spec.DeepCopy(), &infrav1.CapacitySource{Source: "Spec", Image: in.Image}
		cond(metav1.ConditionTrue, infrav1.CapacityResolvedReason, "Capacity from spec.capacity (%s)", describe(out.Capacity))
	case in.Err != nil && before.CapacitySource != nil && before.CapacitySource.Source == "Image":
		out.Capacity, out.CapacitySource = before.Capacity, before.CapacitySource
		cond(metav1.ConditionFalse, infrav1.ImageInspectFailedReason, "Could not read image %s: %s; retrying", in.Image, in.Err)
		out.Retry = true
	case in.Err != nil:
		// A spec.capacity taken away is not kept: nobody declares it.
		cond(metav1.ConditionFalse, infrav1.ImageInspectFailedReason, "Could not read image %s: %s; retrying", in.Image, in.Err)
		out.Retry = true
	default:
		capacity, err := capacityLabel(in.Labels[LabelCapacity])
		switch {
		case err == nil && labelErr != nil:
			err = labelErr
		case err == nil && capacity == nil:
			cond(metav1.ConditionTrue, infrav1.CapacityNotDeclaredReason,
				"Neither spec.capacity nor the %s label of image %s declares a capacity: the cluster autoscaler cannot scale a MachineDeployment of this template from zero", LabelCapacity, in.Image)
		}
		// The image was read: whatever it declares is its answer, kept
		// until the image or spec.capacity changes.
		out.CapacitySource = &infrav1.CapacitySource{Source: "Image", Image: in.Image}
		if err != nil {
			cond(metav1.ConditionFalse, infrav1.CapacityLabelInvalidReason, "Image %s: %s; fix the image's labels or set spec.capacity", in.Image, err)
			break
		}
		if capacity != nil {
			out.Capacity = capacity
			cond(metav1.ConditionTrue, infrav1.CapacityResolvedReason, "Capacity from the %s label of image %s (%s)", LabelCapacity, in.Image, describe(capacity))
		}
	}
	out.Changed = !equality.Semantic.DeepEqual(out.Capacity, before.Capacity) || !equality.Semantic.DeepEqual(out.NodeInfo, before.NodeInfo)
	return out
}

// capacityLabel parses io.captf.capacity: a JSON object of resource name
// to quantity; nil when the label is absent.
func capacityLabel(raw string) (corev1.ResourceList, error) {
	if raw == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("label %s is not a JSON object of resource names to quantity strings: %w", LabelCapacity, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("label %s is an empty object: declare at least one resource, or remove the label", LabelCapacity)
	}
	out := corev1.ResourceList{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("label %s: %q is not a resource name: %s", LabelCapacity, k, strings.Join(errs, "; "))
		}
		q, err := resource.ParseQuantity(m[k])
		if err != nil {
			return nil, fmt.Errorf("label %s: the quantity of %s, %q, does not parse: %w", LabelCapacity, k, m[k], err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}

// nodeInfo parses io.captf.node-info: {"architecture", "operatingSystem"},
// at least one, no other key; nil when the label is absent.
func nodeInfo(raw string) (*infrav1.NodeInfo, error) {
	if raw == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("label %s is not a JSON object of strings: %w", LabelNodeInfo, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("label %s is an empty object: give architecture, operatingSystem or both", LabelNodeInfo)
	}
	info := &infrav1.NodeInfo{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch v := m[k]; k {
		case "architecture":
			if !slices.Contains(architectures, v) {
				return nil, fmt.Errorf("label %s: architecture %q is not one of %s", LabelNodeInfo, v, strings.Join(architectures, ", "))
			}
			info.Architecture = v
		case "operatingSystem":
			if v == "" || len(v) > 64 {
				return nil, fmt.Errorf("label %s: operatingSystem must have 1 to 64 characters", LabelNodeInfo)
			}
			info.OperatingSystem = v
		default:
			return nil, fmt.Errorf("label %s: unknown key %q (want architecture and operatingSystem)", LabelNodeInfo, k)
		}
	}
	return info, nil
}

func describe(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		q := l[k]
		parts = append(parts, string(k)+"="+q.String())
	}
	return strings.Join(parts, ", ")
}

// Bounds of what the controller writes: a condition message (a registry's
// error can be long) and an event note.
const (
	maxMessage = 1024
	maxNote    = 512
)

// cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n-3]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}
