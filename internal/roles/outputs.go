package roles

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/outputs"
	"captf.io/captf/pkg/state"
)

// reading is the part of a Contract every role shares.
type reading struct {
	report outputs.Report
	health *outputs.Health
}

func (r reading) ready() bool {
	return r.report.Valid() && !r.report.Pending() && r.health != nil && !r.health.Pending()
}

// HealthPending implements Contract.
func (r reading) HealthPending() bool { return r.health != nil && r.health.Pending() }

// ProviderIDMissing implements Contract; machineContract overrides it.
func (r reading) ProviderIDMissing() bool { return false }

// Conditions implements Contract.
func (r reading) Conditions() []metav1.Condition {
	return []metav1.Condition{r.report.Condition(), outputs.HealthCondition(r.health)}
}

type clusterContract struct {
	reading
	outputs.Cluster
	// clusterEndpoint: the Cluster sets a valid endpoint, so the module
	// was handed one and its output is not written back.
	clusterEndpoint bool
}

// Provisionable implements Contract.
func (c clusterContract) Provisionable() bool { return c.ready() }

type machineContract struct {
	reading
	outputs.Machine
	// hadProviderID: spec.providerID was written by an earlier reading.
	hadProviderID bool
}

// ProviderIDMissing implements Contract.
func (c machineContract) ProviderIDMissing() bool {
	return c.hadProviderID && c.report.IsPending("provider_id")
}

// Provisionable implements Contract: a machine also needs its provider ID.
func (c machineContract) Provisionable() bool { return c.ready() && c.ProviderID != "" }

type poolContract struct {
	reading
	outputs.Pool
}

// Provisionable implements Contract.
func (c poolContract) Provisionable() bool { return c.ready() }

// Outputs implements Role.
func (Cluster) Outputs(_ client.Object, o Owner, st *state.State) Contract {
	out, report := outputs.ReadCluster(st.Outputs)
	c := clusterContract{reading: reading{report, out.Health}, Cluster: out}
	if o.Cluster != nil {
		ep := o.Cluster.Spec.ControlPlaneEndpoint
		c.clusterEndpoint = ep.Host != "" && ep.Port > 0
	}
	return c
}

// Apply implements Role: the endpoint is written once, and only while the
// spec has none (the module then owns it: captf.io/endpoint-source=module
// keeps it out of the inputs); failure domains and exports are published.
func (Cluster) Apply(obj client.Object, c Contract) Applied {
	tc, cc := obj.(*infrav1.TerraformCluster), c.(clusterContract)
	var a Applied
	if !cc.report.Valid() {
		return a
	}
	if cc.Endpoint != nil && !cc.clusterEndpoint && tc.Spec.ControlPlaneEndpoint.Host == "" && tc.Spec.ControlPlaneEndpoint.Port == 0 {
		tc.Spec.ControlPlaneEndpoint = *cc.Endpoint
		if tc.Annotations == nil {
			tc.Annotations = map[string]string{}
		}
		tc.Annotations[infrav1.EndpointSourceAnnotation] = "module"
		a.SpecChanged = true
		a.Events = append(a.Events, Event{Type: corev1.EventTypeNormal, Reason: "ControlPlaneEndpointSet", Note: "Set spec.controlPlaneEndpoint from the module's control_plane_endpoint output"})
	}
	if !equality.Semantic.DeepEqual(tc.Status.FailureDomains, cc.FailureDomains) {
		tc.Status.FailureDomains = cc.FailureDomains
		a.Events = append(a.Events, Event{Type: corev1.EventTypeNormal, Reason: "FailureDomainsChanged", Note: fmt.Sprintf("status.failureDomains lists %d failure domains", len(cc.FailureDomains))})
	}
	if cc.ExportsPublishable {
		tc.Status.Exports = &apiextensionsv1.JSON{Raw: slices.Clone(cc.Exports)}
	} else if tc.Status.Exports != nil {
		tc.Status.Exports = nil
		a.Events = append(a.Events, Event{Type: corev1.EventTypeWarning, Reason: "ExportsNotPublished", Note: fmt.Sprintf("The exports output is larger than %d bytes of compact JSON; status.exports is cleared (machines and pools still read exports from state)", outputs.MaxExportsBytes)})
	}
	return a
}

// Outputs implements Role.
func (Machine) Outputs(obj client.Object, o Owner, st *state.State) Contract {
	tm := obj.(*infrav1.TerraformMachine)
	out, report := outputs.ReadMachine(st.Outputs, outputs.MachineExpect{ProviderID: tm.Spec.ProviderID, FailureDomain: requestedFailureDomain(o)})
	return machineContract{reading{report, out.Health}, out, tm.Spec.ProviderID != ""}
}

// requestedFailureDomain is the failure_domain input: the Machine's
// spec.failureDomain ("" when the Machine is gone or asks for none).
func requestedFailureDomain(o Owner) string {
	if m, ok := o.Object.(*clusterv1.Machine); ok {
		return m.Spec.FailureDomain
	}
	return ""
}

// Apply implements Role: the provider ID is written to the spec once.
func (Machine) Apply(obj client.Object, c Contract) Applied {
	tm, mc := obj.(*infrav1.TerraformMachine), c.(machineContract)
	var a Applied
	if !mc.report.Valid() {
		return a
	}
	if mc.ProviderID != "" && tm.Spec.ProviderID == "" {
		tm.Spec.ProviderID = mc.ProviderID
		a.SpecChanged = true
		a.Events = append(a.Events, Event{Type: corev1.EventTypeNormal, Reason: "ProviderIDSet", Note: "Set spec.providerID from the module's provider_id output"})
	}
	if !mc.report.IsPending("addresses") {
		tm.Status.Addresses = mc.Addresses
	}
	if !mc.report.IsPending("failure_domain") {
		tm.Status.FailureDomain = mc.FailureDomain
	}
	tm.Status.Interruptible = &mc.Interruptible
	return a
}

// Outputs implements Role.
func (MachinePool) Outputs(_ client.Object, _ Owner, st *state.State) Contract {
	out, report := outputs.ReadPool(st.Outputs)
	return poolContract{reading{report, out.Health}, out}
}

// Apply implements Role: the provider ID list and the group's provider ID
// in the spec, the observed replicas and instances in the status.
func (MachinePool) Apply(obj client.Object, c Contract) Applied {
	tmp, pc := obj.(*infrav1.TerraformMachinePool), c.(poolContract)
	var a Applied
	if !pc.report.Valid() {
		return a
	}
	if pc.ProviderID != "" && tmp.Spec.ProviderID == "" {
		tmp.Spec.ProviderID = pc.ProviderID
		a.SpecChanged = true
		a.Events = append(a.Events, Event{Type: corev1.EventTypeNormal, Reason: "ProviderIDSet", Note: "Set spec.providerID from the module's provider_id output"})
	}
	if !pc.report.IsPending("provider_id_list") && !slices.Equal(tmp.Spec.ProviderIDList, pc.ProviderIDList) {
		tmp.Spec.ProviderIDList = pc.ProviderIDList
		a.SpecChanged = true
	}
	if !pc.report.IsPending("replicas") {
		tmp.Status.Replicas = pc.Replicas
	}
	if !pc.report.IsPending("instances") {
		tmp.Status.Instances = pc.Instances
	}
	return a
}

// After implements Role: a cluster's endpoint is written while reading
// its state; nothing more.
func (Cluster) After(client.Object, Owner) AfterStep { return AfterStep{} }

// After implements Role.
func (Machine) After(client.Object, Owner) AfterStep { return AfterStep{} }

// Settle implements Role: once the cluster was provisioned,
// EndpointAvailable says whether it has a control plane endpoint.
func (Cluster) Settle(obj client.Object) []metav1.Condition {
	tc := obj.(*infrav1.TerraformCluster)
	if tc.Status.Initialization.Provisioned == nil {
		return nil
	}
	ep := tc.Spec.ControlPlaneEndpoint
	if ep.Host == "" {
		return []metav1.Condition{{Type: infrav1.EndpointAvailableCondition, Status: metav1.ConditionFalse, Reason: infrav1.WaitingForEndpointReason,
			Message: "Neither the module's control_plane_endpoint output nor the Cluster sets an endpoint"}}
	}
	return []metav1.Condition{{Type: infrav1.EndpointAvailableCondition, Status: metav1.ConditionTrue, Reason: infrav1.EndpointAvailableReason,
		Message: fmt.Sprintf("The control plane endpoint is %s:%d", ep.Host, ep.Port)}}
}

// Settle implements Role: a machine has no status of its own to settle.
func (Machine) Settle(client.Object) []metav1.Condition { return nil }

// Settle implements Role: status.ready mirrors initialization.provisioned
// (for consumers of the older contract).
func (MachinePool) Settle(obj client.Object) []metav1.Condition {
	tmp := obj.(*infrav1.TerraformMachinePool)
	tmp.Status.Ready = tmp.Status.Initialization.Provisioned
	return nil
}

// After implements Role: the autoscaling write-back.
func (MachinePool) After(obj client.Object, o Owner) AfterStep {
	return SyncAutoscaling(obj.(*infrav1.TerraformMachinePool), o)
}
