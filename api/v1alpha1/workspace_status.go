package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Operation is one Terraform/OpenTofu operation; each runs as one Job.
// +kubebuilder:validation:Enum=apply;plan;destroy;refresh;drift;restore
type Operation string

const (
	// OperationApply applies the rendered inputs.
	OperationApply Operation = "apply"
	// OperationPlan plans the rendered inputs for approval (applyPolicy Manual).
	OperationPlan Operation = "plan"
	// OperationDestroy destroys the infrastructure of a deleted object.
	OperationDestroy Operation = "destroy"
	// OperationRefresh runs apply -refresh-only: state and health, no changes.
	OperationRefresh Operation = "refresh"
	// OperationDrift refreshes, then plans without refresh to find drift.
	OperationDrift Operation = "drift"
	// OperationRestore pushes a state backup back as the object's state.
	OperationRestore Operation = "restore"
)

// RunErrorKind classifies a run that did not succeed.
// +kubebuilder:validation:Enum=image-layout;step;interrupted;blocked;plan-changed
type RunErrorKind string

const (
	// RunErrorImageLayout: the module image breaks the image contract; no
	// command ran.
	RunErrorImageLayout RunErrorKind = "image-layout"
	// RunErrorStep: a runtime command failed; error.step names it.
	RunErrorStep RunErrorKind = "step"
	// RunErrorInterrupted: the run was stopped by SIGTERM from outside.
	RunErrorInterrupted RunErrorKind = "interrupted"
	// RunErrorBlocked: a guarded apply stopped before a plan that deletes or
	// replaces a resource. Nothing changed.
	RunErrorBlocked RunErrorKind = "blocked"
	// RunErrorPlanChanged: an approved apply planned something else than the
	// approved plan. Nothing changed.
	RunErrorPlanChanged RunErrorKind = "plan-changed"
)

// Initialization is the Cluster API v1beta2 initialization contract.
type Initialization struct {
	// provisioned is true once the first apply completed with valid outputs
	// and a health reading that is not pending. It never goes back to false.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// ActiveJob is the Job currently running for the object.
type ActiveJob struct {
	// name of the Job.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// operation the Job runs.
	// +required
	Operation Operation `json:"operation,omitempty"`

	// attempt is the a<N> of the Job name: one more than the newest retained
	// Job of the same operation.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Attempt int32 `json:"attempt,omitempty"`

	// startTime is when the Job was created.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
}

// RunStep is one runtime command of a run.
type RunStep struct {
	// name of the step: init, force-unlock, validate, plan, show-json, apply,
	// apply-refresh-only, destroy, state-push, state-list.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name,omitempty"`

	// exitCode of the command.
	// +optional
	ExitCode int32 `json:"exitCode"`

	// durationMilliseconds the command took.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DurationMilliseconds int64 `json:"durationMilliseconds"`
}

// RunError says why a run did not succeed. It never carries raw output.
type RunError struct {
	// kind of the failure.
	// +required
	Kind RunErrorKind `json:"kind,omitempty"`

	// step names the command that failed, when one did.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Step string `json:"step,omitempty"`

	// summary is the runner's curated failure summary, secrets redacted.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Summary string `json:"summary,omitempty"`

	// resources are "<address>: <summary>" lines of the resources the
	// failure concerns.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MaxLength=512
	Resources []string `json:"resources,omitempty"`
}

// DriftSummary counts the changes a drift check found.
type DriftSummary struct {
	// create is the number of resources that would be created.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Create int32 `json:"create"`
	// update is the number of resources that would be updated in place.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Update int32 `json:"update"`
	// replace is the number of resources that would be replaced.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replace int32 `json:"replace"`
	// delete is the number of resources that would be deleted.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Delete int32 `json:"delete"`
	// resources are "<address> (<action>)" entries of the drifted resources.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=512
	Resources []string `json:"resources,omitempty"`
}

// LastRun is the outcome of the newest finished Job, from the runner's
// result document.
type LastRun struct {
	// job is the Job's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Job string `json:"job,omitempty"`

	// operation the Job ran.
	// +required
	Operation Operation `json:"operation,omitempty"`

	// steps the runner ran, in order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Steps []RunStep `json:"steps,omitempty"`

	// error is set when the run did not succeed.
	// +optional
	Error *RunError `json:"error,omitempty"`

	// drift is what a drift check found.
	// +optional
	Drift *DriftSummary `json:"drift,omitempty"`
}

// StateBackup is one complete backup of the object's state.
type StateBackup struct {
	// serial of the backed-up state; annotate the object with
	// captf.io/restore-state=<serial> to restore it.
	// +required
	// +kubebuilder:validation:Minimum=1
	Serial int64 `json:"serial,omitempty"`

	// takenAt is when the backup was taken.
	// +required
	TakenAt metav1.Time `json:"takenAt,omitzero"`

	// bytes is the compressed size summed over the backup's Secrets.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Bytes int64 `json:"bytes"`
}

// SourceStatus is what the newest Jobs ran.
type SourceStatus struct {
	// image as written in spec.source.image when the last successful apply ran.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// imageDigest is the digest the last successful apply ran; later
	// destroy, refresh and drift Jobs run it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ImageDigest string `json:"imageDigest,omitempty"`

	// runtimeVersion is the Terraform or OpenTofu version the runner found.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	RuntimeVersion string `json:"runtimeVersion,omitempty"`
}

// WorkspaceStatus is the status every workload kind carries. It is rebuilt
// from state and Jobs and is never load-bearing: clusterctl move does not
// carry it.
type WorkspaceStatus struct {
	// conditions of the object; Ready summarises them.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the status was computed for.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// initialization is the Cluster API provisioning contract.
	// +optional
	Initialization Initialization `json:"initialization,omitzero"`

	// activeJob is the running Job, if any.
	// +optional
	ActiveJob *ActiveJob `json:"activeJob,omitempty"`

	// lastRun is the outcome of the newest finished Job.
	// +optional
	LastRun *LastRun `json:"lastRun,omitempty"`

	// lastDriftCheck is when the newest successful drift check finished.
	// +optional
	LastDriftCheck *metav1.Time `json:"lastDriftCheck,omitempty"`

	// lastRefresh is when the newest successful refresh finished (or the
	// apply, when the apply's own health reading was definite).
	// +optional
	LastRefresh *metav1.Time `json:"lastRefresh,omitempty"`

	// pendingRefreshes counts consecutive health readings of "pending".
	// +optional
	// +kubebuilder:validation:Minimum=1
	PendingRefreshes int32 `json:"pendingRefreshes,omitempty"`

	// observedStateSerial is the serial of the state the status was read from.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedStateSerial int64 `json:"observedStateSerial,omitempty"`

	// stateBytes is the compressed size of the state, summed over its Secrets.
	// A Secret holds at most 1 MiB.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StateBytes int64 `json:"stateBytes,omitempty"`

	// lastRestoredSerial is the serial of the newest restore request
	// consumed, whether it succeeded or not.
	// +optional
	// +kubebuilder:validation:Minimum=1
	LastRestoredSerial int64 `json:"lastRestoredSerial,omitempty"`

	// stateSecretSuffix is the suffix of the object's state Secrets
	// (tfstate-default-<suffix>). Informational: never read back.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	StateSecretSuffix string `json:"stateSecretSuffix,omitempty"`

	// stateBackups are the complete state backups, newest first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	StateBackups []StateBackup `json:"stateBackups,omitempty"`

	// source is what the Jobs ran; omitted until a Job ran.
	// +optional
	Source *SourceStatus `json:"source,omitempty"`
}

// PlanReference names a TerraformPlan in the object's namespace.
type PlanReference struct {
	// name of the TerraformPlan.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
}
