package echo

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// TestMoved: a pass moved the metadata, or the spec, of its object only
// when they differ from the object as read; its status moves neither.
func TestMoved(t *testing.T) {
	read := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Name: "m", Annotations: map[string]string{"a": "1"}},
		Spec: infrav1.TerraformMachineSpec{ProviderID: ""}}
	for _, tc := range []struct {
		name           string
		change         func(*infrav1.TerraformMachine)
		metadata, spec bool
	}{
		{"nothing", func(*infrav1.TerraformMachine) {}, false, false},
		{"the status only", func(m *infrav1.TerraformMachine) { m.Status.FailureDomain = "z1" }, false, false},
		{"an annotation", func(m *infrav1.TerraformMachine) { m.Annotations["a"] = "2" }, true, false},
		{"a contract field of the spec", func(m *infrav1.TerraformMachine) { m.Spec.ProviderID = "captf://x" }, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := read.DeepCopy()
			tc.change(after)
			if metadata, spec := Moved(read, after); metadata != tc.metadata || spec != tc.spec {
				t.Errorf("Moved = %v, %v; want %v, %v", metadata, spec, tc.metadata, tc.spec)
			}
		})
	}
}

// TestWithStatusOf: the object as a pass leaves it, with the status it
// read: what the API server serves between the spec write and the status
// write.
func TestWithStatusOf(t *testing.T) {
	read := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Name: "m"}}
	read.Status.FailureDomain = "read"
	left := read.DeepCopy()
	left.Spec.ProviderID, left.Status.FailureDomain = "captf://x", "left"
	got, err := WithStatusOf(left, read, &infrav1.TerraformMachine{})
	if err != nil {
		t.Fatal(err)
	}
	m := got.(*infrav1.TerraformMachine)
	if m.Spec.ProviderID != "captf://x" || m.Status.FailureDomain != "read" {
		t.Errorf("WithStatusOf = spec %q, status %q; want the spec left, the status read", m.Spec.ProviderID, m.Status.FailureDomain)
	}
	if left.Status.FailureDomain != "left" {
		t.Error("WithStatusOf changed the object it was given")
	}
}
