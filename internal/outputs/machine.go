package outputs

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// MachineExpect is what a machine's outputs are held to.
type MachineExpect struct {
	// FailureDomain is the failure_domain input (the Machine's
	// spec.failureDomain), "" when none was requested.
	FailureDomain string
	// ProviderID is spec.providerID as already written, "" when none.
	ProviderID string
}

// Machine is what a machine module's outputs set (contract §10.4).
type Machine struct {
	// ProviderID is provider_id; "" while the module reports null (or "").
	ProviderID string
	// Addresses in canonical order: by type (InternalIP, InternalDNS,
	// ExternalIP, ExternalDNS, Hostname), then by address; nil for [] and
	// while the module reports null.
	Addresses []clusterv1.MachineAddress
	// FailureDomain is failure_domain; "" while the module reports null.
	FailureDomain string
	// Interruptible is interruptible; null is false.
	Interruptible bool
	// Health is the health reading; nil when it is not known.
	Health *Health
}

type addressJSON struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// ReadMachine reads a machine module's outputs. provider_id and addresses
// are pending while null, and so is failure_domain when one was requested.
// A provider ID other than the one already written is ProviderIDChanged, a
// failure domain other than the requested one FailureDomainMismatch. When
// the Report is not Valid, only Health may be set.
//
// A null provider_id after provisioning is the caller's to judge over two
// samples (ProviderIDMissing, then terminated): the Report says
// IsPending("provider_id") and ProviderID is "".
func ReadMachine(outs map[string]state.Output, expect MachineExpect) (Machine, Report) {
	pending := []string{"provider_id", "addresses"}
	if expect.FailureDomain != "" {
		pending = append(pending, "failure_domain")
	}
	r := read(contract.RoleMachine, values(contract.RoleMachine, outs), pending...)
	var m Machine
	if r.known("provider_id") && r.decode("provider_id", &m.ProviderID) &&
		expect.ProviderID != "" && m.ProviderID != expect.ProviderID {
		r.report.add(infrav1.ProviderIDChangedReason, "provider_id",
			"provider_id differs from spec.providerID, which is written once and kept: a machine's provider ID must never change; replace the Machine instead")
	}
	if r.known("failure_domain") && r.decode("failure_domain", &m.FailureDomain) &&
		expect.FailureDomain != "" && m.FailureDomain != expect.FailureDomain {
		r.report.add(infrav1.FailureDomainMismatchReason, "failure_domain",
			"failure_domain differs from the requested failure domain "+strconv.Quote(expect.FailureDomain)+": the module must place the machine where the Machine asks")
	}
	var addrs []addressJSON
	if r.known("addresses") {
		r.decode("addresses", &addrs)
	}
	if r.known("interruptible") {
		r.decode("interruptible", &m.Interruptible)
	}
	if !r.report.Valid() {
		return Machine{Health: r.health()}, r.report
	}
	m.Addresses = addresses(addrs)
	m.Health = r.health()
	return m, r.report
}

// addressOrder is the canonical order of address types.
var addressOrder = []clusterv1.MachineAddressType{
	clusterv1.MachineInternalIP,
	clusterv1.MachineInternalDNS,
	clusterv1.MachineExternalIP,
	clusterv1.MachineExternalDNS,
	clusterv1.MachineHostName,
}

// addresses converts validated addresses into canonical order; none is nil.
func addresses(in []addressJSON) []clusterv1.MachineAddress {
	if len(in) == 0 {
		return nil
	}
	out := make([]clusterv1.MachineAddress, 0, len(in))
	for _, a := range in {
		out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineAddressType(a.Type), Address: a.Address})
	}
	slices.SortStableFunc(out, func(a, b clusterv1.MachineAddress) int {
		if c := cmp.Compare(slices.Index(addressOrder, a.Type), slices.Index(addressOrder, b.Type)); c != 0 {
			return c
		}
		return strings.Compare(a.Address, b.Address)
	})
	return out
}
