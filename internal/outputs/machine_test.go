package outputs_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/outputs"
)

func TestReadMachineConditions(t *testing.T) {
	testCases := []struct {
		name      string
		changes   map[string]string
		expect    outputs.MachineExpect
		status    metav1.ConditionStatus
		reason    string
		fragments []string
		pending   []string // Report.IsPending
	}{
		{name: "valid", status: metav1.ConditionTrue, reason: infrav1.OutputsValidReason},
		{name: "written provider ID read again", expect: outputs.MachineExpect{ProviderID: "aws:///zone-a/i-1", FailureDomain: "zone-a"},
			status: metav1.ConditionTrue, reason: infrav1.OutputsValidReason},
		{name: "empty provider ID is null: pending", changes: map[string]string{"provider_id": `""`},
			status: metav1.ConditionUnknown, reason: infrav1.OutputsPendingReason, fragments: []string{"provider_id is null"}, pending: []string{"provider_id"}},
		{name: "provider ID not stored: pending", changes: map[string]string{"provider_id": absent, "addresses": absent},
			status: metav1.ConditionUnknown, reason: infrav1.OutputsPendingReason, pending: []string{"addresses", "provider_id"}},
		{name: "provider ID too long", changes: map[string]string{"provider_id": `"` + strings.Repeat("p", 513) + `"`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"provider_id: maxLength: must have at most 512 characters"}},
		{name: "provider ID changed", changes: map[string]string{"provider_id": `"aws:///zone-a/i-2"`}, expect: outputs.MachineExpect{ProviderID: "aws:///zone-a/i-1"},
			status: metav1.ConditionFalse, reason: infrav1.ProviderIDChangedReason, fragments: []string{"provider_id differs from spec.providerID"}},
		{name: "provider ID null after it was written", changes: map[string]string{"provider_id": absent}, expect: outputs.MachineExpect{ProviderID: "aws:///zone-a/i-1"},
			status: metav1.ConditionUnknown, reason: infrav1.OutputsPendingReason, pending: []string{"provider_id"}},
		{name: "failure domain mismatch", expect: outputs.MachineExpect{FailureDomain: "zone-b"},
			status: metav1.ConditionFalse, reason: infrav1.FailureDomainMismatchReason, fragments: []string{`requested failure domain "zone-b"`}},
		{name: "requested failure domain not known yet", changes: map[string]string{"failure_domain": absent}, expect: outputs.MachineExpect{FailureDomain: "zone-a"},
			status: metav1.ConditionUnknown, reason: infrav1.OutputsPendingReason, pending: []string{"failure_domain"}},
		{name: "no failure domain requested nor reported", changes: map[string]string{"failure_domain": absent},
			status: metav1.ConditionTrue, reason: infrav1.OutputsValidReason},
		{name: "failure domain too long", changes: map[string]string{"failure_domain": `"` + strings.Repeat("z", 257) + `"`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"failure_domain: maxLength"}},
		{name: "address of an unknown type", changes: map[string]string{"addresses": `[{"type":"PodIP","address":"10.0.0.1"}]`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"addresses/0/type: value must be one of"}},
		{name: "257 addresses", changes: map[string]string{"addresses": repeat(`{"type":"Hostname","address":"n"}`, 257)},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"addresses: maxItems: got 257, want 256"}},
		{name: "interruptible not a bool", changes: map[string]string{"interruptible": `"yes"`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"interruptible: got string, want null or boolean"}},
		{name: "health missing", changes: map[string]string{"health": absent},
			status: metav1.ConditionFalse, reason: infrav1.OutputsMissingReason},
		{name: "invalid outranks mismatch", changes: map[string]string{"interruptible": `1`}, expect: outputs.MachineExpect{FailureDomain: "zone-b"},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"; failure_domain differs"}},
		{name: "mismatch outranks changed", changes: map[string]string{"provider_id": `"x"`}, expect: outputs.MachineExpect{FailureDomain: "zone-b", ProviderID: "y"},
			status: metav1.ConditionFalse, reason: infrav1.FailureDomainMismatchReason, fragments: []string{"; provider_id differs"}},
		{name: "changed outranks pending", changes: map[string]string{"provider_id": `"x"`, "addresses": absent}, expect: outputs.MachineExpect{ProviderID: "y"},
			status: metav1.ConditionFalse, reason: infrav1.ProviderIDChangedReason, fragments: []string{"; addresses is null"}, pending: []string{"addresses"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			m, r := outputs.ReadMachine(outs(machineBase, tc.changes), tc.expect)
			wantCondition(t, r.Condition(), tc.status, tc.reason, tc.fragments...)
			for _, name := range []string{"provider_id", "addresses", "failure_domain", "interruptible", "health"} {
				if want := strings.Contains(strings.Join(tc.pending, ","), name); r.IsPending(name) != want {
					t.Errorf("IsPending(%s) = %v, want %v", name, !want, want)
				}
			}
			if !r.Valid() && (m.ProviderID != "" || m.Addresses != nil || m.FailureDomain != "" || m.Interruptible) {
				t.Errorf("an invalid report wrote contract fields: %+v", m)
			}
			if m.Health == nil && tc.reason != infrav1.OutputsMissingReason {
				t.Error("Health is nil although the health output is valid")
			}
		})
	}
}

func TestReadMachineFields(t *testing.T) {
	m, r := outputs.ReadMachine(outs(machineBase, map[string]string{
		"addresses": `[{"type":"Hostname","address":"h"},{"type":"ExternalDNS","address":"e.example"},{"type":"ExternalIP","address":"203.0.113.1"},` +
			`{"type":"InternalDNS","address":"i.internal"},{"type":"InternalIP","address":"10.0.0.9"},{"type":"InternalIP","address":"10.0.0.10"}]`,
		"interruptible": absent,
	}), outputs.MachineExpect{FailureDomain: "zone-a"})
	if !r.Valid() || r.Pending() {
		t.Fatalf("report: %+v", r.Condition())
	}
	want := []clusterv1.MachineAddress{
		{Type: clusterv1.MachineInternalIP, Address: "10.0.0.10"},
		{Type: clusterv1.MachineInternalIP, Address: "10.0.0.9"},
		{Type: clusterv1.MachineInternalDNS, Address: "i.internal"},
		{Type: clusterv1.MachineExternalIP, Address: "203.0.113.1"},
		{Type: clusterv1.MachineExternalDNS, Address: "e.example"},
		{Type: clusterv1.MachineHostName, Address: "h"},
	}
	if !equalJSON(m.Addresses, want) {
		t.Errorf("addresses %s, want %s", jsonOf(m.Addresses), jsonOf(want))
	}
	if m.ProviderID != "aws:///zone-a/i-1" || m.FailureDomain != "zone-a" || m.Interruptible {
		t.Errorf("got %+v", m)
	}
	if m.Health == nil || m.Health.State != outputs.StateRunning || !m.Health.Healthy {
		t.Errorf("health %+v", m.Health)
	}

	m, _ = outputs.ReadMachine(outs(machineBase, map[string]string{"addresses": `[]`, "interruptible": `true`}), outputs.MachineExpect{})
	if m.Addresses != nil || !m.Interruptible {
		t.Errorf("[] addresses and interruptible true: got %+v", m)
	}
}

func TestReadMachinePendingKeepsKnownFields(t *testing.T) {
	m, r := outputs.ReadMachine(outs(machineBase, map[string]string{"provider_id": `""`}), outputs.MachineExpect{})
	if !r.Valid() || !r.Pending() || !r.IsPending("provider_id") {
		t.Fatalf("report %+v", r)
	}
	if m.ProviderID != "" || len(m.Addresses) != 3 || m.FailureDomain != "zone-a" {
		t.Errorf("pending provider ID must leave the known fields: %+v", m)
	}
}
