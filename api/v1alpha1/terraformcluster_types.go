package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// ApplyPolicy says whether a TerraformCluster's applies need approval.
// +kubebuilder:validation:Enum=Automatic;Manual
type ApplyPolicy string

const (
	// ApplyPolicyAutomatic applies changes at once; the destructive guard
	// still stops deletes and replacements for approval.
	ApplyPolicyAutomatic ApplyPolicy = "Automatic"
	// ApplyPolicyManual plans every apply but the first and waits for the
	// TerraformPlan to be approved.
	ApplyPolicyManual ApplyPolicy = "Manual"
)

// ClusterDriftSpec schedules a TerraformCluster's drift checks.
type ClusterDriftSpec struct {
	// intervalSeconds between drift checks (default: the manager's
	// --drift-default-interval). 0 disables drift checks and health sampling.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	IntervalSeconds *int32 `json:"intervalSeconds,omitempty"`

	// action on drift: Report (default) or Remediate.
	// +optional
	Action DriftAction `json:"action,omitempty"`
}

// ClusterDefaults are inherited by the cluster's TerraformMachines and
// TerraformMachinePools for every field they leave unset. They never apply
// to the TerraformCluster itself.
type ClusterDefaults struct {
	// identityRef for machines and pools that set none.
	// +optional
	IdentityRef *IdentityReference `json:"identityRef,omitempty"`

	// jobs policy, merged field by field under each object's own.
	// +optional
	Jobs *JobsSpec `json:"jobs,omitempty"`

	// drift schedule; intervalSeconds 0 disables machines' drift checks
	// (never a pool's); action applies to pools only.
	// +optional
	Drift *ClusterDriftSpec `json:"drift,omitempty"`

	// remediation for machines, merged field by field.
	// +optional
	Remediation *RemediationSpec `json:"remediation,omitempty"`

	// membershipRefreshIntervalSeconds for pools (default 60).
	// +optional
	// +kubebuilder:validation:Minimum=15
	// +kubebuilder:validation:Maximum=86400
	MembershipRefreshIntervalSeconds *int32 `json:"membershipRefreshIntervalSeconds,omitempty"`

	// deletionPolicy for machines and pools that set none.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// TerraformClusterSpec is the desired state of a TerraformCluster.
type TerraformClusterSpec struct {
	// source is the cluster-role module image. Changing it re-applies.
	// +required
	Source SourceSpec `json:"source,omitzero"`

	// identityRef names the credentials of the cluster's Jobs. Required on a
	// TerraformCluster; a template may leave it to a ClusterClass patch.
	// +optional
	IdentityRef *IdentityReference `json:"identityRef,omitempty"`

	// controlPlaneEndpoint is the control plane's API endpoint. When unset,
	// it is written once from the module's control_plane_endpoint output.
	// host and port are set together and are immutable once set.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.host) == has(self.port)",message="set host and port together"
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// applyPolicy is Automatic (default) or Manual.
	// +optional
	ApplyPolicy ApplyPolicy `json:"applyPolicy,omitempty"`

	// drift schedules the cluster's own drift checks.
	// +optional
	Drift *ClusterDriftSpec `json:"drift,omitempty"`

	// maxActiveJobs caps the running Jobs of the cluster, its machines and
	// its pools (default: the manager's --cluster-max-active-jobs).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MaxActiveJobs *int32 `json:"maxActiveJobs,omitempty"`

	// defaults are inherited by the cluster's machines and pools.
	// +optional
	Defaults *ClusterDefaults `json:"defaults,omitempty"`

	// jobs tunes the cluster's own Jobs.
	// +optional
	Jobs *JobsSpec `json:"jobs,omitempty"`

	// variables are user variables passed to the module, a JSON object.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=256
	Variables *apiextensionsv1.JSON `json:"variables,omitempty"`

	// variablesFrom reads more variables from labelled ConfigMaps and
	// Secrets; later sources win, variables win over all.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	VariablesFrom []VariablesFromSource `json:"variablesFrom,omitempty"`

	// deletionPolicy is Destroy (default) or Retain.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// adoptRetainedState adopts state a deleted object of the same name
	// retained.
	// +optional
	AdoptRetainedState *bool `json:"adoptRetainedState,omitempty"`
}

// TerraformClusterStatus is the observed state of a TerraformCluster.
type TerraformClusterStatus struct {
	WorkspaceStatus `json:",inline"`

	// failureDomains from the module's failure_domains output.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`

	// exports is a published copy of the module's exports output (at most
	// 64 KiB of compact JSON). Machines and pools read exports from state,
	// never from here.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Exports *apiextensionsv1.JSON `json:"exports,omitempty"`

	// pendingPlanRef names the live TerraformPlan awaiting or holding
	// approval.
	// +optional
	PendingPlanRef *PlanReference `json:"pendingPlanRef,omitempty"`
}

// TerraformCluster is the Cluster API infrastructure cluster: it runs a
// cluster-role module and reports its control plane endpoint and failure
// domains.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=terraformclusters,scope=Namespaced,categories=cluster-api,shortName=tfc
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="has(self.spec) && has(self.spec.identityRef)",message="spec.identityRef is required: name the TerraformClusterIdentity (or Secret) the cluster's Jobs use"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/provider=infrastructure-terraform"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move="
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster API Cluster"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host"
// +kubebuilder:printcolumn:name="Operation",type="string",JSONPath=".status.activeJob.operation",description="Running operation"
// +kubebuilder:printcolumn:name="State Size",type="integer",JSONPath=".status.stateBytes",description="Compressed state bytes"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.source.image",priority=1
// +kubebuilder:printcolumn:name="InputsApplied",type="string",JSONPath=".status.conditions[?(@.type==\"InputsApplied\")].status",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TerraformCluster struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +required
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.controlPlaneEndpoint) || !has(oldSelf.controlPlaneEndpoint.host) || !has(oldSelf.controlPlaneEndpoint.port) || (has(self.controlPlaneEndpoint) && self.controlPlaneEndpoint == oldSelf.controlPlaneEndpoint)",message="controlPlaneEndpoint is immutable once host and port are set",fieldPath=".controlPlaneEndpoint"
	Spec TerraformClusterSpec `json:"spec,omitzero"`

	// status is the observed state.
	// +optional
	Status TerraformClusterStatus `json:"status,omitzero"`
}

// TerraformClusterList is a list of TerraformClusters.
// +kubebuilder:object:root=true
type TerraformClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TerraformCluster `json:"items"`
}

func init() {
	register(&TerraformCluster{}, &TerraformClusterList{})
}
