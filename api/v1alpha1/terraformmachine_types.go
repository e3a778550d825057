package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// MachineDriftSpec schedules a TerraformMachine's drift checks. A machine's
// drift is always reported, never remediated.
type MachineDriftSpec struct {
	// intervalSeconds between drift checks (default: inherited, then the
	// manager's --drift-default-interval). 0 disables them.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	IntervalSeconds *int32 `json:"intervalSeconds,omitempty"`
}

// TerraformMachineSpec is the desired state of a TerraformMachine. Its
// module inputs (source, identityRef, variables, variablesFrom) are
// immutable: a machine is replaced, never changed in place.
type TerraformMachineSpec struct {
	// source is the machine-role module image. Immutable.
	// +required
	Source SourceSpec `json:"source,omitzero"`

	// identityRef names the credentials of the machine's Jobs; when unset,
	// the cluster's defaults.identityRef, then its identityRef. Immutable.
	// +optional
	IdentityRef *IdentityReference `json:"identityRef,omitempty"`

	// providerID is written once by the manager from the module's
	// provider_id output.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// jobs tunes the machine's Jobs.
	// +optional
	Jobs *JobsSpec `json:"jobs,omitempty"`

	// drift schedules the machine's drift checks.
	// +optional
	Drift *MachineDriftSpec `json:"drift,omitempty"`

	// remediation asks Cluster API to remediate an unhealthy machine.
	// +optional
	Remediation *RemediationSpec `json:"remediation,omitempty"`

	// variables are user variables passed to the module, a JSON object.
	// Immutable.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=256
	Variables *apiextensionsv1.JSON `json:"variables,omitempty"`

	// variablesFrom reads more variables from labelled ConfigMaps and
	// Secrets until the machine is provisioned. Immutable.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	VariablesFrom []VariablesFromSource `json:"variablesFrom,omitempty"`

	// deletionPolicy is Destroy or Retain; when unset, inherited from the
	// cluster, then Destroy.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// adoptRetainedState adopts state a deleted object of the same name
	// retained.
	// +optional
	AdoptRetainedState *bool `json:"adoptRetainedState,omitempty"`
}

// TerraformMachineStatus is the observed state of a TerraformMachine.
type TerraformMachineStatus struct {
	WorkspaceStatus `json:",inline"`

	// addresses from the module's addresses output, in canonical type order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// failureDomain the instance runs in, from the module's failure_domain
	// output.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// interruptible is true for spot/preemptible instances.
	// +optional
	Interruptible *bool `json:"interruptible,omitempty"`

	// unhealthySamples counts consecutive unhealthy health readings.
	// +optional
	// +kubebuilder:validation:Minimum=1
	UnhealthySamples int32 `json:"unhealthySamples,omitempty"`
}

// TerraformMachine is the Cluster API infrastructure machine: it runs a
// machine-role module for one Machine and reports its provider ID and
// addresses.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=terraformmachines,scope=Namespaced,categories=cluster-api,shortName=tfm
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/provider=infrastructure-terraform"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move="
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster API Cluster"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Cluster API Machine"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID"
// +kubebuilder:printcolumn:name="Operation",type="string",JSONPath=".status.activeJob.operation",description="Running operation"
// +kubebuilder:printcolumn:name="State Size",type="integer",JSONPath=".status.stateBytes",description="Compressed state bytes"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.source.image",priority=1
// +kubebuilder:printcolumn:name="InputsApplied",type="string",JSONPath=".status.conditions[?(@.type==\"InputsApplied\")].status",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TerraformMachine struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state. Its module inputs are immutable; these
	// rules sit on the field, not the type, so that a template (which is
	// immutable through its webhook, with Cluster API's dry-runs exempt)
	// does not inherit them.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.source == oldSelf.source",message="source is immutable: replace the Machine to run another image",fieldPath=".source"
	// +kubebuilder:validation:XValidation:rule="has(self.identityRef) == has(oldSelf.identityRef) && (!has(self.identityRef) || self.identityRef == oldSelf.identityRef)",message="identityRef is immutable: replace the Machine to use other credentials",fieldPath=".identityRef"
	// +kubebuilder:validation:XValidation:rule="has(self.variables) == has(oldSelf.variables) && (!has(self.variables) || self.variables == oldSelf.variables)",message="variables are immutable: replace the Machine to change them",fieldPath=".variables"
	// +kubebuilder:validation:XValidation:rule="has(self.variablesFrom) == has(oldSelf.variablesFrom) && (!has(self.variablesFrom) || self.variablesFrom == oldSelf.variablesFrom)",message="variablesFrom is immutable: replace the Machine to change it",fieldPath=".variablesFrom"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.providerID) || (has(self.providerID) && self.providerID == oldSelf.providerID)",message="providerID is immutable once set",fieldPath=".providerID"
	Spec TerraformMachineSpec `json:"spec,omitzero"`

	// status is the observed state.
	// +optional
	Status TerraformMachineStatus `json:"status,omitzero"`
}

// TerraformMachineList is a list of TerraformMachines.
// +kubebuilder:object:root=true
type TerraformMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TerraformMachine `json:"items"`
}

func init() {
	register(&TerraformMachine{}, &TerraformMachineList{})
}
