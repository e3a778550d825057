package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IdentityType is the kind of credentials an identity carries.
// +kubebuilder:validation:Enum=Secret
type IdentityType string

// IdentityTypeSecret: the credentials are the keys of a Secret.
const IdentityTypeSecret IdentityType = "Secret"

// SecretReference names a Secret in any namespace.
type SecretReference struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`

	// namespace of the Secret. It need not be an allowed namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// AllowedNamespaces says which namespaces may use an identity: the union of
// list and selector. selector: {} allows every namespace.
// +kubebuilder:validation:XValidation:rule="has(self.list) || has(self.selector)",message="allowedNamespaces must set list or selector; to allow every namespace write selector: {}"
type AllowedNamespaces struct {
	// list of namespace names.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	List []string `json:"list,omitempty"`

	// selector on Namespace labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// TerraformClusterIdentitySpec is the desired state of a
// TerraformClusterIdentity.
// +kubebuilder:validation:MinProperties=1
type TerraformClusterIdentitySpec struct {
	// type of the credentials; only Secret (the default) exists.
	// +optional
	Type IdentityType `json:"type,omitempty"`

	// secretRef names the source Secret. CAPTF never writes it; it copies
	// its data into a mirror Secret in each namespace that uses the identity.
	// +required
	SecretRef SecretReference `json:"secretRef,omitzero"`

	// requiredKeys must all be present in the source Secret, or the identity
	// reports CredentialsIncomplete.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[-._a-zA-Z0-9]+$`
	RequiredKeys []string `json:"requiredKeys,omitempty"`

	// allowedNamespaces may use the identity. When unset, no namespace may.
	// +optional
	AllowedNamespaces *AllowedNamespaces `json:"allowedNamespaces,omitempty"`
}

// TerraformClusterIdentityStatus is the observed state of a
// TerraformClusterIdentity.
type TerraformClusterIdentityStatus struct {
	// namespaces holding a mirror of the identity that an object uses.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	Namespaces []string `json:"namespaces,omitempty"`

	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TerraformClusterIdentity names the credentials Secret of TerraformCluster,
// TerraformMachine and TerraformMachinePool Jobs and the namespaces allowed
// to use it.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=terraformclusteridentities,scope=Cluster,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/provider=infrastructure-terraform"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move-hierarchy="
// +kubebuilder:printcolumn:name="Secret",type="string",JSONPath=".spec.secretRef.name"
// +kubebuilder:printcolumn:name="Namespace",type="string",JSONPath=".spec.secretRef.namespace"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TerraformClusterIdentity struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +required
	Spec TerraformClusterIdentitySpec `json:"spec,omitzero"`

	// status is the observed state.
	// +optional
	Status TerraformClusterIdentityStatus `json:"status,omitzero"`
}

// TerraformClusterIdentityList is a list of TerraformClusterIdentities.
// +kubebuilder:object:root=true
type TerraformClusterIdentityList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TerraformClusterIdentity `json:"items"`
}

func init() {
	register(&TerraformClusterIdentity{}, &TerraformClusterIdentityList{})
}
