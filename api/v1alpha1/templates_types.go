package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// The three templates are cloned by Cluster API (ClusterClass, MachineSets,
// control plane providers). A template's spec.template.spec is immutable
// once created; the admission webhook enforces it (CEL cannot see the
// ClusterClass dry-run requests that are exempt), so it is not a CEL rule.

// TerraformClusterTemplateResource is what a TerraformClusterTemplate stamps.
type TerraformClusterTemplateResource struct {
	// metadata is copied onto every TerraformCluster created from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitzero"`

	// spec of every TerraformCluster created from the template.
	// +required
	Spec TerraformClusterSpec `json:"spec,omitzero"`
}

// TerraformClusterTemplateSpec is the desired state of a
// TerraformClusterTemplate.
type TerraformClusterTemplateSpec struct {
	// template is the TerraformCluster to stamp.
	// +required
	Template TerraformClusterTemplateResource `json:"template,omitzero"`
}

// TerraformClusterTemplate is a template a ClusterClass clones into
// TerraformClusters.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=terraformclustertemplates,scope=Namespaced,categories=cluster-api,shortName=tfct
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/provider=infrastructure-terraform"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move="
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.template.spec.source.image"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TerraformClusterTemplate struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +required
	Spec TerraformClusterTemplateSpec `json:"spec,omitzero"`
}

// TerraformClusterTemplateList is a list of TerraformClusterTemplates.
// +kubebuilder:object:root=true
type TerraformClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TerraformClusterTemplate `json:"items"`
}

// TerraformMachineTemplateResource is what a TerraformMachineTemplate stamps.
type TerraformMachineTemplateResource struct {
	// metadata is copied onto every TerraformMachine created from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitzero"`

	// spec of every TerraformMachine created from the template. providerID
	// must stay empty.
	// +required
	// +kubebuilder:validation:XValidation:rule="!has(self.providerID)",message="providerID cannot be set on a template: the manager writes it on each TerraformMachine",fieldPath=".providerID"
	Spec TerraformMachineSpec `json:"spec,omitzero"`
}

// TerraformMachineTemplateSpec is the desired state of a
// TerraformMachineTemplate.
type TerraformMachineTemplateSpec struct {
	// template is the TerraformMachine to stamp.
	// +required
	Template TerraformMachineTemplateResource `json:"template,omitzero"`

	// capacity of the machines, for the cluster autoscaler's scale from
	// zero. It replaces the image's io.captf.capacity label as a whole.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
}

// CapacitySourceKind says where a template's capacity came from.
// +kubebuilder:validation:Enum=Spec;Image
type CapacitySourceKind string

// CapacitySource records where status.capacity was resolved from.
type CapacitySource struct {
	// source is Spec (spec.capacity) or Image (the image's labels).
	// +required
	Source CapacitySourceKind `json:"source,omitempty"`

	// image is the image reference the capacity was resolved for.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`
}

// NodeInfo describes the nodes a template's machines become.
type NodeInfo struct {
	// architecture of the nodes.
	// +optional
	// +kubebuilder:validation:Enum=amd64;arm64;s390x;ppc64le
	Architecture string `json:"architecture,omitempty"`

	// operatingSystem of the nodes.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	OperatingSystem string `json:"operatingSystem,omitempty"`
}

// TerraformMachineTemplateStatus is the observed state of a
// TerraformMachineTemplate.
type TerraformMachineTemplateStatus struct {
	// capacity resolved for the cluster autoscaler.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// nodeInfo resolved from the image's labels.
	// +optional
	NodeInfo *NodeInfo `json:"nodeInfo,omitempty"`

	// capacitySource says where capacity came from.
	// +optional
	CapacitySource *CapacitySource `json:"capacitySource,omitempty"`

	// conditions: CapacityResolved and VariablesValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TerraformMachineTemplate is a template Cluster API clones into
// TerraformMachines, one per Machine.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=terraformmachinetemplates,scope=Namespaced,categories=cluster-api,shortName=tfmt
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/provider=infrastructure-terraform"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move="
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.template.spec.source.image"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TerraformMachineTemplate struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +required
	Spec TerraformMachineTemplateSpec `json:"spec,omitzero"`

	// status is the observed state.
	// +optional
	Status TerraformMachineTemplateStatus `json:"status,omitzero"`
}

// TerraformMachineTemplateList is a list of TerraformMachineTemplates.
// +kubebuilder:object:root=true
type TerraformMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TerraformMachineTemplate `json:"items"`
}

// TerraformMachinePoolTemplateResource is what a TerraformMachinePoolTemplate
// stamps.
type TerraformMachinePoolTemplateResource struct {
	// metadata is copied onto every TerraformMachinePool created from the
	// template; its labels also reach the module as node_labels.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitzero"`

	// spec of every TerraformMachinePool created from the template.
	// +required
	Spec TerraformMachinePoolSpec `json:"spec,omitzero"`
}

// TerraformMachinePoolTemplateSpec is the desired state of a
// TerraformMachinePoolTemplate.
type TerraformMachinePoolTemplateSpec struct {
	// template is the TerraformMachinePool to stamp.
	// +required
	Template TerraformMachinePoolTemplateResource `json:"template,omitzero"`
}

// TerraformMachinePoolTemplate is a template a ClusterClass clones into
// TerraformMachinePools.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=terraformmachinepooltemplates,scope=Namespaced,categories=cluster-api,shortName=tfmpt
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/provider=infrastructure-terraform"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move="
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.template.spec.source.image"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TerraformMachinePoolTemplate struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +required
	Spec TerraformMachinePoolTemplateSpec `json:"spec,omitzero"`
}

// TerraformMachinePoolTemplateList is a list of TerraformMachinePoolTemplates.
// +kubebuilder:object:root=true
type TerraformMachinePoolTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TerraformMachinePoolTemplate `json:"items"`
}

func init() {
	register(
		&TerraformClusterTemplate{}, &TerraformClusterTemplateList{},
		&TerraformMachineTemplate{}, &TerraformMachineTemplateList{},
		&TerraformMachinePoolTemplate{}, &TerraformMachinePoolTemplateList{},
	)
}
