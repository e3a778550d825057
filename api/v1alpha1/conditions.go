package v1alpha1

// Condition types of the workload kinds (TerraformCluster, TerraformMachine,
// TerraformMachinePool). Waiting is Unknown: it never makes Ready False and
// never counts toward backoff. Deleting, DriftDetected and DeletionBlocked
// have negative polarity.
const (
	// ReadyCondition summarises the object's other conditions.
	ReadyCondition = "Ready"
	// PausedCondition is True while the object or its Cluster is paused.
	PausedCondition = "Paused"
	// DeletingCondition is True once the object is being deleted.
	DeletingCondition = "Deleting"
	// DeletionBlockedCondition (TerraformCluster) is True while machines or
	// pools of the cluster still exist.
	DeletionBlockedCondition = "DeletionBlocked"
	// DependenciesReadyCondition reports the owner, the Cluster, exports,
	// bootstrap data and variable sources the inputs need.
	DependenciesReadyCondition = "DependenciesReady"
	// IdentityAllowedCondition reports whether the object may use its identity.
	IdentityAllowedCondition = "IdentityAllowed"
	// CredentialsMirroredCondition reports the credentials mirror Secret.
	CredentialsMirroredCondition = "CredentialsMirrored"
	// RunnerRBACReadyCondition reports the runner ServiceAccount and RoleBinding.
	RunnerRBACReadyCondition = "RunnerRBACReady"
	// ApplyJobSucceededCondition reports apply, plan and destroy Jobs.
	ApplyJobSucceededCondition = "ApplyJobSucceeded"
	// DriftJobSucceededCondition reports refresh and drift Jobs; never feeds Ready.
	DriftJobSucceededCondition = "DriftJobSucceeded"
	// RestoreJobSucceededCondition reports restore Jobs; never feeds Ready.
	RestoreJobSucceededCondition = "RestoreJobSucceeded"
	// DriftDetectedCondition is True while a drift check found changes.
	DriftDetectedCondition = "DriftDetected"
	// StateReadableCondition reports whether the state could be read.
	StateReadableCondition = "StateReadable"
	// OutputsValidCondition reports the module's outputs against the contract.
	OutputsValidCondition = "OutputsValid"
	// InfrastructureHealthyCondition maps the module's health output.
	InfrastructureHealthyCondition = "InfrastructureHealthy"
	// InputsAppliedCondition is True when the current inputs are applied;
	// for kstatus, Flux and Argo. Never feeds Ready.
	InputsAppliedCondition = "InputsApplied"
	// EndpointAvailableCondition (TerraformCluster) reports the control
	// plane endpoint.
	EndpointAvailableCondition = "EndpointAvailable"
	// AutoscalingActiveCondition (TerraformMachinePool) reports whether the
	// module owns the replica count.
	AutoscalingActiveCondition = "AutoscalingActive"
	// CapacityResolvedCondition (TerraformMachineTemplate) reports the
	// autoscaler capacity.
	CapacityResolvedCondition = "CapacityResolved"
	// VariablesValidCondition (TerraformMachineTemplate) reports the template's
	// variables against the image's schema.
	VariablesValidCondition = "VariablesValid"
	// ApprovedCondition (TerraformPlan) reports the approval.
	ApprovedCondition = "Approved"
)

// Reasons of Ready.
const (
	// ReadyReason: every summarised condition is True.
	ReadyReason = "Ready"
	// NotReadyReason: a summarised condition is False.
	NotReadyReason = "NotReady"
	// ReadyUnknownReason: a summarised condition is Unknown or missing.
	ReadyUnknownReason = "ReadyUnknown"
)

// Reasons of Paused and Deleting.
const (
	// PausedReason: the object or its Cluster is paused.
	PausedReason = "Paused"
	// NotPausedReason: nothing pauses the object.
	NotPausedReason = "NotPaused"
	// DeletingReason: the object is being deleted.
	DeletingReason = "Deleting"
	// DeletionPolicyUnresolvedReason: a deleting machine or pool sets no
	// deletionPolicy and its TerraformCluster cannot be found.
	DeletionPolicyUnresolvedReason = "DeletionPolicyUnresolved"
	// NotDeletingReason: the object is not being deleted.
	NotDeletingReason = "NotDeleting"
)

// Reasons of DeletionBlocked.
const (
	// DependentsExistReason: machines or pools of the cluster still exist.
	DependentsExistReason = "DependentsExist"
	// NotBlockedReason: nothing blocks the deletion.
	NotBlockedReason = "NotBlocked"
)

// Reasons of DependenciesReady.
const (
	// DependenciesReadyReason: everything the inputs need is there.
	DependenciesReadyReason = "DependenciesReady"
	// ClusterNotTerraformReason: the Cluster's infrastructureRef is not a
	// TerraformCluster.
	ClusterNotTerraformReason = "ClusterNotTerraform"
	// OwnerMismatchReason: the owner does not reference this object back.
	OwnerMismatchReason = "OwnerMismatch"
	// OwnerNotFoundReason: the owner reference names an object that is gone.
	OwnerNotFoundReason = "OwnerNotFound"
	// VariablesInvalidReason: a user variable is invalid.
	VariablesInvalidReason = "VariablesInvalid"
	// VariablesSourceNotFoundReason: a variablesFrom source is missing or
	// not labelled captf.io/variables=true.
	VariablesSourceNotFoundReason = "VariablesSourceNotFound"
	// WaitingForOwnerMachineReason: the owning Machine is not there yet.
	WaitingForOwnerMachineReason = "WaitingForOwnerMachine"
	// WaitingForOwnerMachinePoolReason: the owning MachinePool is not there yet.
	WaitingForOwnerMachinePoolReason = "WaitingForOwnerMachinePool"
	// WaitingForOwnerReason: no owner reference of the expected kind yet.
	WaitingForOwnerReason = "WaitingForOwner"
	// WaitingForClusterInfrastructureReason: the TerraformCluster is not
	// provisioned yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// WaitingForClusterExportsReason: the cluster's exports cannot be read.
	WaitingForClusterExportsReason = "WaitingForClusterExports"
	// WaitingForBootstrapDataReason: the bootstrap data Secret is not set yet.
	WaitingForBootstrapDataReason = "WaitingForBootstrapData"
)

// Reasons of IdentityAllowed, CredentialsMirrored and RunnerRBACReady.
const (
	// IdentityAllowedReason: the identity allows the object's namespace.
	IdentityAllowedReason = "IdentityAllowed"
	// LocalSecretReason: identityRef.kind Secret names a Secret in the
	// object's namespace, used as-is.
	LocalSecretReason = "LocalSecret"
	// IdentityNotFoundReason: no identity is referenced or it does not exist.
	IdentityNotFoundReason = "IdentityNotFound"
	// NamespaceNotAllowedReason: the identity does not allow the namespace.
	NamespaceNotAllowedReason = "NamespaceNotAllowed"
	// SecretNotFoundReason: the identity's source Secret does not exist.
	SecretNotFoundReason = "SecretNotFound"
	// CredentialsIncompleteReason: the source Secret lacks requiredKeys.
	CredentialsIncompleteReason = "CredentialsIncomplete"
	// IdentityCheckFailedReason: the check could not be made (API error).
	IdentityCheckFailedReason = "IdentityCheckFailed"
	// MirroredReason: the mirror Secret is current.
	MirroredReason = "Mirrored"
	// MirrorFailedReason: the mirror could not be written, or a foreign
	// Secret holds its name.
	MirrorFailedReason = "MirrorFailed"
	// MirrorPendingReason: the mirror waits for IdentityAllowed.
	MirrorPendingReason = "MirrorPending"
	// RBACReadyReason: the runner ServiceAccount and RoleBinding are in place.
	RBACReadyReason = "RBACReady"
	// RBACFailedReason: they could not be written, or a foreign RoleBinding
	// holds the name.
	RBACFailedReason = "RBACFailed"
	// ServiceAccountNotOptedInReason: spec.jobs.serviceAccountName names an
	// account that is missing or not labelled captf.io/runner=true.
	ServiceAccountNotOptedInReason = "ServiceAccountNotOptedIn"
)

// Reasons of ApplyJobSucceeded.
const (
	// ApplySucceededReason: the newest apply succeeded.
	ApplySucceededReason = "ApplySucceeded"
	// DestroySucceededReason: the destroy succeeded.
	DestroySucceededReason = "DestroySucceeded"
	// ApplyFailedReason: the newest apply failed, or vanished mid-run.
	ApplyFailedReason = "ApplyFailed"
	// DestroyFailedReason: the destroy failed or cannot be rendered.
	DestroyFailedReason = "DestroyFailed"
	// DestructivePlanBlockedReason: a guarded apply stopped before deleting or
	// replacing a resource; a TerraformPlan waits for approval.
	DestructivePlanBlockedReason = "DestructivePlanBlocked"
	// IdentityNotAllowedReason: a destroy waits for its identity.
	IdentityNotAllowedReason = "IdentityNotAllowed"
	// NamespaceTerminatingReason: the object's namespace is being deleted,
	// so Kubernetes refuses new Jobs there, and the destroy cannot run in
	// an evacuation namespace either (the manager watches one namespace, or
	// what the destroy needs is gone); the state is kept and the message
	// names the way out.
	NamespaceTerminatingReason = "NamespaceTerminating"
	// RuntimeCannotKeepStateReason: the Job's image runs OpenTofu
	// (io.captf.runtime=tofu), which keeps the state in one Secret, and the
	// object's state does not fit one; the message names the way forward.
	RuntimeCannotKeepStateReason = "RuntimeCannotKeepState"
	// ImageInvalidReason: the module image breaks the image contract.
	ImageInvalidReason = "ImageInvalid"
	// ImagePullFailedReason: the module image could not be pulled.
	ImagePullFailedReason = "ImagePullFailed"
	// InputsTooLargeReason: the rendered inputs exceed 1,000,000 bytes.
	InputsTooLargeReason = "InputsTooLarge"
	// JobDeadlineExceededReason: the Job hit activeDeadlineSeconds.
	JobDeadlineExceededReason = "JobDeadlineExceeded"
	// JobPolicyInvalidReason: the merged jobs policy has lockTimeoutSeconds
	// not below activeDeadlineSeconds.
	JobPolicyInvalidReason = "JobPolicyInvalid"
	// NoApplyYetReason: no apply has finished yet.
	NoApplyYetReason = "NoApplyYet"
	// PlanAwaitingApprovalReason: a Manual plan waits for approval.
	PlanAwaitingApprovalReason = "PlanAwaitingApproval"
	// PlanChangedReason: the approved plan no longer matched; nothing applied.
	PlanChangedReason = "PlanChanged"
	// WaitingForClusterOperationReason: the cluster's own operation runs.
	WaitingForClusterOperationReason = "WaitingForClusterOperation"
	// WaitingForMachineOperationsReason: the cluster waits for its machines'
	// and pools' operations.
	WaitingForMachineOperationsReason = "WaitingForMachineOperations"
	// WaitingForRunLeaseReason: another Job holds the object's run lease.
	WaitingForRunLeaseReason = "WaitingForRunLease"
	// WaitingForJobSlotReason: a Job limit is reached.
	WaitingForJobSlotReason = "WaitingForJobSlot"
)

// Reasons of DriftJobSucceeded and DriftDetected.
const (
	// DriftCheckedReason: the newest refresh or drift Job succeeded.
	DriftCheckedReason = "DriftChecked"
	// DriftJobDeadlineExceededReason: a refresh or drift Job hit its deadline.
	DriftJobDeadlineExceededReason = "DriftJobDeadlineExceeded"
	// DriftJobFailedReason: a refresh or drift Job failed.
	DriftJobFailedReason = "DriftJobFailed"
	// DriftJobRunningReason: a refresh or drift Job runs.
	DriftJobRunningReason = "DriftJobRunning"
	// DriftNotCheckedReason: no drift check finished yet.
	DriftNotCheckedReason = "DriftNotChecked"
	// DurableInputsMissingReason: the recorded inputs a refresh or drift
	// needs are gone.
	DurableInputsMissingReason = "DurableInputsMissing"
	// NoDriftReason: the newest drift check found nothing.
	NoDriftReason = "NoDrift"
	// DriftReportedReason: drift found; action Report.
	DriftReportedReason = "DriftReported"
	// DriftPendingReason: drift found; action Remediate, apply due.
	DriftPendingReason = "DriftPending"
	// DriftRemediatingReason: the remediation apply runs.
	DriftRemediatingReason = "DriftRemediating"
)

// Reasons of RestoreJobSucceeded.
const (
	// StateRestoredReason: the restore pushed the backup.
	StateRestoredReason = "StateRestored"
	// RestoreBackupNotFoundReason: no complete backup has the requested serial.
	RestoreBackupNotFoundReason = "RestoreBackupNotFound"
	// RestoreFailedReason: the restore Job failed; not retried for the serial.
	RestoreFailedReason = "RestoreFailed"
)

// Reasons of StateReadable.
const (
	// StateReadReason: the state was read.
	StateReadReason = "StateRead"
	// StateNotFoundReason: no state yet; normal for a new object.
	StateNotFoundReason = "StateNotFound"
	// StateLostReason: the object applied before but its state is gone.
	StateLostReason = "StateLost"
	// StateCorruptReason: the state cannot be decoded, exceeds the reader's
	// limits, or has an unsupported version.
	StateCorruptReason = "StateCorrupt"
	// StateEncryptedReason: OpenTofu state encryption is on; CAPTF cannot
	// read it.
	StateEncryptedReason = "StateEncrypted"
	// StateInconsistentReason: the state's Secrets do not form a sequence.
	StateInconsistentReason = "StateInconsistent"
	// StateLockedReason: a holder CAPTF does not recognise holds the lock.
	StateLockedReason = "StateLocked"
	// RetainedStateFoundReason: state retained from a deleted object of the
	// same name is in the way.
	RetainedStateFoundReason = "RetainedStateFound"
	// ApplyOutcomeUnknownReason: an apply ended without a result and no state
	// exists; it may have created resources.
	ApplyOutcomeUnknownReason = "ApplyOutcomeUnknown"
)

// Reasons of OutputsValid.
const (
	// OutputsValidReason: the outputs satisfy the contract.
	OutputsValidReason = "OutputsValid"
	// InstancesTruncatedReason: more than 1000 pool instances; the rest are
	// not listed.
	InstancesTruncatedReason = "InstancesTruncated"
	// FailureDomainMismatchReason: the machine's failure_domain differs from
	// the one the Machine asked for.
	FailureDomainMismatchReason = "FailureDomainMismatch"
	// OutputsInvalidReason: an output has the wrong shape.
	OutputsInvalidReason = "OutputsInvalid"
	// OutputsMissingReason: a required output is missing.
	OutputsMissingReason = "OutputsMissing"
	// ProviderIDChangedReason: provider_id changed after it was written.
	ProviderIDChangedReason = "ProviderIDChanged"
	// OutputsPendingReason: no state to read outputs from yet.
	OutputsPendingReason = "OutputsPending"
)

// Reasons of InfrastructureHealthy.
const (
	// HealthyReason: health state running and healthy.
	HealthyReason = "Healthy"
	// InstanceDegradedReason: health state degraded.
	InstanceDegradedReason = "InstanceDegraded"
	// InstancePendingReason: health state pending.
	InstancePendingReason = "InstancePending"
	// InstanceStoppedReason: health state stopped.
	InstanceStoppedReason = "InstanceStopped"
	// InstanceTerminatedReason: health state terminated.
	InstanceTerminatedReason = "InstanceTerminated"
	// InstanceUnhealthyReason: health state running but not healthy.
	InstanceUnhealthyReason = "InstanceUnhealthy"
	// ProvisioningReason: the first apply started.
	ProvisioningReason = "Provisioning"
	// HealthUnknownReason: health unknown or not reported.
	HealthUnknownReason = "HealthUnknown"
	// ProviderIDMissingReason: provider_id read null once after provisioning.
	ProviderIDMissingReason = "ProviderIDMissing"
	// WaitingForProvisioningReason: no apply started yet.
	WaitingForProvisioningReason = "WaitingForProvisioning"
)

// Reasons of InputsApplied.
const (
	// InputsAppliedReason: the current inputs are applied.
	InputsAppliedReason = "InputsApplied"
	// ApplyPendingReason: an apply of the current inputs is due.
	ApplyPendingReason = "ApplyPending"
	// AwaitingApprovalReason: the current inputs wait for approval.
	AwaitingApprovalReason = "AwaitingApproval"
	// ApplyRunningReason: an apply of the current inputs runs.
	ApplyRunningReason = "ApplyRunning"
	// InputsApplyFailedReason: the apply of the current inputs failed.
	InputsApplyFailedReason = "InputsApplyFailed"
	// InputsUnavailableReason: the current inputs cannot be built.
	InputsUnavailableReason = "InputsUnavailable"
)

// Reasons of EndpointAvailable and AutoscalingActive.
const (
	// EndpointAvailableReason: spec.controlPlaneEndpoint is set.
	EndpointAvailableReason = "EndpointAvailable"
	// WaitingForEndpointReason: no endpoint yet.
	WaitingForEndpointReason = "WaitingForEndpoint"
	// ReplicasManagedByModuleReason: autoscaling is on; the module owns the count.
	ReplicasManagedByModuleReason = "ReplicasManagedByModule"
	// AutoscalingAnnotationsInvalidReason: the autoscaler annotations are invalid.
	AutoscalingAnnotationsInvalidReason = "AutoscalingAnnotationsInvalid"
	// AutoscalingDisabledReason: no autoscaler annotations.
	AutoscalingDisabledReason = "AutoscalingDisabled"
	// ReplicasManagedExternallyReason: another owner holds replicas-managed-by.
	ReplicasManagedExternallyReason = "ReplicasManagedExternally"
)

// Reasons of the TerraformMachineTemplate conditions.
const (
	// CapacityNotDeclaredReason: neither spec nor image declares capacity.
	CapacityNotDeclaredReason = "CapacityNotDeclared"
	// CapacityResolvedReason: capacity resolved.
	CapacityResolvedReason = "CapacityResolved"
	// CapacityLabelInvalidReason: the image's capacity label is invalid.
	CapacityLabelInvalidReason = "CapacityLabelInvalid"
	// ImageInspectFailedReason: the image could not be inspected.
	ImageInspectFailedReason = "ImageInspectFailed"
	// VariablesValidReason: the variables match the image's schema.
	VariablesValidReason = "VariablesValid"
	// VariablesSchemaNotDeclaredReason: the image declares no variables schema.
	VariablesSchemaNotDeclaredReason = "VariablesSchemaNotDeclared"
	// VariablesRejectedReason: the variables do not match the schema.
	VariablesRejectedReason = "VariablesRejected"
	// VariablesSourcePendingReason: a variables source is not readable yet.
	VariablesSourcePendingReason = "VariablesSourcePending"
	// VariablesSchemaUnavailableReason: the schema could not be read.
	VariablesSchemaUnavailableReason = "VariablesSchemaUnavailable"
)

// Reasons of the TerraformClusterIdentity Ready condition.
const (
	// SecretFoundReason: the source Secret exists with every required key.
	SecretFoundReason = "SecretFound"
)

// Reasons of the TerraformPlan conditions. Ready is True for Pending,
// Approved and Applied plans and False for Superseded and Failed ones;
// Approved is True once approved.
const (
	// PlanPendingReason: the plan waits for approval.
	PlanPendingReason = "Pending"
	// PlanApprovedReason: the plan is approved.
	PlanApprovedReason = "Approved"
	// PlanAppliedReason: the approved apply succeeded.
	PlanAppliedReason = "Applied"
	// PlanSupersededReason: a newer plan replaced it, or it became moot.
	PlanSupersededReason = "Superseded"
	// PlanFailedReason: the approved apply planned other changes.
	PlanFailedReason = "Failed"
	// PlanNotApprovedReason: the plan ended without approval.
	PlanNotApprovedReason = "NotApproved"
	// PlanApprovalIgnoredReason: the approval raced the plan's supersession.
	PlanApprovalIgnoredReason = "ApprovalIgnored"
)
