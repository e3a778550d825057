package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// MachinePoolDriftSpec schedules a TerraformMachinePool's drift checks. A
// pool's drift cannot be disabled: its periodic checks refresh instance
// counts.
type MachinePoolDriftSpec struct {
	// intervalSeconds between drift checks (default: inherited, then the
	// manager's --drift-default-interval).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=31536000
	IntervalSeconds *int32 `json:"intervalSeconds,omitempty"`

	// action on drift: Report or Remediate; when unset, inherited from the
	// cluster, then Report.
	// +optional
	Action DriftAction `json:"action,omitempty"`
}

// InstanceState is the state a pool member reports.
// +kubebuilder:validation:Enum=pending;running;degraded;stopped;terminated;unknown
type InstanceState string

// MachinePoolInstance is one member of a pool, from the module's instances
// output.
type MachinePoolInstance struct {
	// providerID of the instance.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// instanceID is the infrastructure's own identifier.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	InstanceID string `json:"instanceID,omitempty"`

	// addresses of the instance.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// failureDomain the instance runs in.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// state of the instance.
	// +optional
	State InstanceState `json:"state,omitempty"`
}

// TerraformMachinePoolSpec is the desired state of a TerraformMachinePool.
// Every field is mutable; a change re-applies.
type TerraformMachinePoolSpec struct {
	// source is the machinepool-role module image.
	// +required
	Source SourceSpec `json:"source,omitzero"`

	// identityRef names the credentials of the pool's Jobs; when unset, the
	// cluster's defaults.identityRef, then its identityRef.
	// +optional
	IdentityRef *IdentityReference `json:"identityRef,omitempty"`

	// providerID from the module's provider_id output, when it reports one.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// providerIDList is the sorted list of the members' provider IDs, from
	// the module's provider_id_list output.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`

	// jobs tunes the pool's Jobs.
	// +optional
	Jobs *JobsSpec `json:"jobs,omitempty"`

	// drift schedules the pool's drift checks.
	// +optional
	Drift *MachinePoolDriftSpec `json:"drift,omitempty"`

	// membershipRefreshIntervalSeconds spaces the refresh Jobs that read the
	// pool's members (default: inherited, then 60).
	// +optional
	// +kubebuilder:validation:Minimum=15
	// +kubebuilder:validation:Maximum=86400
	MembershipRefreshIntervalSeconds *int32 `json:"membershipRefreshIntervalSeconds,omitempty"`

	// variables are user variables passed to the module, a JSON object.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=256
	Variables *apiextensionsv1.JSON `json:"variables,omitempty"`

	// variablesFrom reads more variables from labelled ConfigMaps and Secrets.
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

// TerraformMachinePoolStatus is the observed state of a TerraformMachinePool.
type TerraformMachinePoolStatus struct {
	WorkspaceStatus `json:",inline"`

	// ready mirrors initialization.provisioned for Cluster API v1beta1
	// consumers.
	// +optional
	Ready *bool `json:"ready,omitempty"`

	// replicas is the observed number of members.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// instances are the pool's members (at most 1000 are listed).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Instances []MachinePoolInstance `json:"instances,omitempty"`

	// pendingPlanRef names the live TerraformPlan of an exports change.
	// +optional
	PendingPlanRef *PlanReference `json:"pendingPlanRef,omitempty"`
}

// TerraformMachinePool is the Cluster API infrastructure machine pool: one
// machinepool-role module run for a whole group of instances.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=terraformmachinepools,scope=Namespaced,categories=cluster-api,shortName=tfmp
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/provider=infrastructure-terraform"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move="
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster API Cluster"
// +kubebuilder:printcolumn:name="MachinePool",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"MachinePool\")].name",description="Cluster API MachinePool"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="Operation",type="string",JSONPath=".status.activeJob.operation",description="Running operation"
// +kubebuilder:printcolumn:name="State Size",type="integer",JSONPath=".status.stateBytes",description="Compressed state bytes"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.source.image",priority=1
// +kubebuilder:printcolumn:name="InputsApplied",type="string",JSONPath=".status.conditions[?(@.type==\"InputsApplied\")].status",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TerraformMachinePool struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +required
	Spec TerraformMachinePoolSpec `json:"spec,omitzero"`

	// status is the observed state.
	// +optional
	Status TerraformMachinePoolStatus `json:"status,omitzero"`
}

// TerraformMachinePoolList is a list of TerraformMachinePools.
// +kubebuilder:object:root=true
type TerraformMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TerraformMachinePool `json:"items"`
}

func init() {
	register(&TerraformMachinePool{}, &TerraformMachinePoolList{})
}
