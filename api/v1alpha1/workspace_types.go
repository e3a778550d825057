package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// The workload kinds (TerraformCluster, TerraformMachine and
// TerraformMachinePool) share the spec and status pieces in this file.

// SourceSpec names the module image a workload object runs.
type SourceSpec struct {
	// image is the module image: an OCI image holding the module at
	// /captf/module, the runtime at /captf/runtime and, optionally, a provider
	// mirror at /captf/providers. Only its reference syntax is checked here.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// imagePullPolicy is the pull policy of the module image in every Job.
	// When unset, Jobs use IfNotPresent.
	// +optional
	// +kubebuilder:validation:Enum=IfNotPresent;Always;Never
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
}

// IdentityKind says what an identity reference points at.
// +kubebuilder:validation:Enum=TerraformClusterIdentity;Secret
type IdentityKind string

const (
	// IdentityKindTerraformClusterIdentity references a cluster-scoped
	// TerraformClusterIdentity; its Secret is mirrored into the namespace.
	IdentityKindTerraformClusterIdentity IdentityKind = "TerraformClusterIdentity"
	// IdentityKindSecret references a Secret in the object's own namespace,
	// used as-is without a mirror.
	IdentityKindSecret IdentityKind = "Secret"
)

// IdentityReference names the credentials the module's Jobs receive.
type IdentityReference struct {
	// kind is TerraformClusterIdentity (when unset) or Secret, a Secret in
	// the object's own namespace.
	// +optional
	Kind IdentityKind `json:"kind,omitempty"`

	// name is the name of the identity or Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
}

// JobsSpec tunes the Kubernetes Jobs that run the module. Every field is
// optional; an unset field inherits from the owning TerraformCluster's
// spec.defaults.jobs (machines and pools) and then from the built-in default.
// +kubebuilder:validation:XValidation:rule="!has(self.lockTimeoutSeconds) || !has(self.activeDeadlineSeconds) || self.lockTimeoutSeconds < self.activeDeadlineSeconds",message="lockTimeoutSeconds must be lower than activeDeadlineSeconds"
// +kubebuilder:validation:XValidation:rule="has(self.lockTimeoutSeconds) || !has(self.activeDeadlineSeconds) || self.activeDeadlineSeconds > 300",message="activeDeadlineSeconds must be greater than the default lockTimeoutSeconds (300); lower lockTimeoutSeconds too"
// +kubebuilder:validation:XValidation:rule="!has(self.lockTimeoutSeconds) || has(self.activeDeadlineSeconds) || self.lockTimeoutSeconds < 3600",message="lockTimeoutSeconds must be lower than the default activeDeadlineSeconds (3600); raise activeDeadlineSeconds too"
type JobsSpec struct {
	// successfulJobsHistoryLimit is how many succeeded Jobs are kept per
	// operation (default 3). The newest success of an operation is always kept.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// failedJobsHistoryLimit is how many failed Jobs are kept per operation
	// (default 3). It also bounds the retry backoff.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`

	// activeDeadlineSeconds bounds a Job's run time (default 3600). Reaching it
	// stops the runtime like an eviction and counts as a failure.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// lockTimeoutSeconds is how long a step waits for the state lock
	// (default 300; 0 fails at once on a held lock).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	LockTimeoutSeconds *int32 `json:"lockTimeoutSeconds,omitempty"`

	// serviceAccountName is the ServiceAccount Jobs run as (default
	// captf-runner). Another account must exist and carry the label
	// captf.io/runner=true.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// imagePullSecrets are used to pull the module image and the runner image.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// resources of the module container; replaces the default (requests
	// 250m CPU and 512Mi memory, memory limit 2Gi) as a whole.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// env is added to the module container. Names starting with TF_ or KUBE_
	// are refused: the runner owns them.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Env []corev1.EnvVar `json:"env,omitempty"`

	// securityContext of the module container; replaces the default
	// (seccomp RuntimeDefault, all capabilities dropped, no privilege
	// escalation, read-only root filesystem). It may not weaken it.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// podSecurityContext of the Job's pod; replaces the default (seccomp
	// RuntimeDefault, fsGroup 65532). It may not weaken it.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
}

// VariablesFormat says how a variablesFrom source's values are decoded.
// +kubebuilder:validation:Enum=String;JSON
type VariablesFormat string

const (
	// VariablesFormatString passes every value as a string; the module's
	// variable type converts it.
	VariablesFormatString VariablesFormat = "String"
	// VariablesFormatJSON parses every value as JSON.
	VariablesFormatJSON VariablesFormat = "JSON"
)

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
}

// VariablesFromSource reads module variables from a ConfigMap or Secret
// labelled captf.io/variables=true, one variable per key.
// +kubebuilder:validation:XValidation:rule="has(self.configMapRef) != has(self.secretRef)",message="set exactly one of configMapRef and secretRef"
type VariablesFromSource struct {
	// configMapRef names a ConfigMap in the object's namespace.
	// +optional
	ConfigMapRef *LocalObjectReference `json:"configMapRef,omitempty"`

	// secretRef names a Secret in the object's namespace. Its variables are
	// declared sensitive in the generated root.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`

	// optional lets a missing or unlabelled source contribute nothing
	// instead of stopping the object with VariablesSourceNotFound.
	// +optional
	Optional *bool `json:"optional,omitempty"`

	// format is String (when unset) or JSON.
	// +optional
	Format VariablesFormat `json:"format,omitempty"`
}

// DeletionPolicy says what deleting a workload object does to its
// infrastructure.
// +kubebuilder:validation:Enum=Destroy;Retain
type DeletionPolicy string

const (
	// DeletionPolicyDestroy runs a destroy Job before the finalizer goes.
	DeletionPolicyDestroy DeletionPolicy = "Destroy"
	// DeletionPolicyRetain releases the object without a destroy and keeps
	// its state, backups and inputs records, labelled
	// captf.io/retained-from-uid.
	DeletionPolicyRetain DeletionPolicy = "Retain"
)

// DriftAction says what a drift finding does.
// +kubebuilder:validation:Enum=Report;Remediate
type DriftAction string

const (
	// DriftActionReport only sets DriftDetected.
	DriftActionReport DriftAction = "Report"
	// DriftActionRemediate re-applies the current inputs.
	DriftActionRemediate DriftAction = "Remediate"
)

// RemediationSpec tells a TerraformMachine when to ask Cluster API to
// remediate its Machine.
type RemediationSpec struct {
	// annotateMachine sets cluster.x-k8s.io/remediate-machine on the Machine
	// once the instance is unhealthy for unhealthyThreshold samples
	// (default false).
	// +optional
	AnnotateMachine *bool `json:"annotateMachine,omitempty"`

	// unhealthyThreshold is the number of consecutive unhealthy samples that
	// request remediation (default 3).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	UnhealthyThreshold *int32 `json:"unhealthyThreshold,omitempty"`

	// healthCheckIntervalSeconds spaces the refresh Jobs that sample health
	// while annotateMachine is on (default 300).
	// +optional
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=86400
	HealthCheckIntervalSeconds *int32 `json:"healthCheckIntervalSeconds,omitempty"`
}
