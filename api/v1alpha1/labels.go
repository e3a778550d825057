package v1alpha1

// Finalizers, one per workload kind. The manager removes them only after a
// successful destroy and cleanup, for an object that never applied, on
// Retain, or when releasing an externally managed object.
const (
	// TerraformClusterFinalizer holds a TerraformCluster until its
	// infrastructure is destroyed.
	TerraformClusterFinalizer = "terraformcluster.infrastructure.cluster.x-k8s.io"
	// TerraformMachineFinalizer holds a TerraformMachine until its
	// infrastructure is destroyed.
	TerraformMachineFinalizer = "terraformmachine.infrastructure.cluster.x-k8s.io"
	// TerraformMachinePoolFinalizer holds a TerraformMachinePool until its
	// infrastructure is destroyed.
	TerraformMachinePoolFinalizer = "terraformmachinepool.infrastructure.cluster.x-k8s.io"

	// StateProtectionFinalizer keeps the Secrets a destroy needs (state
	// chunks, backups, inputs records, the plan key, credentials mirrors)
	// until CAPTF's own cleanup removes it: neither the garbage collector
	// under any propagation policy nor a namespace deletion takes them
	// while the infrastructure they describe may still exist.
	StateProtectionFinalizer = "captf.io/state-protection"
)

// Labels CAPTF sets.
const (
	// ManagedLabel ("true") marks everything CAPTF owns: state Secrets,
	// Leases, mirrors, Jobs, inputs records, the runner ServiceAccount. The
	// manager caches only Secrets carrying it, and only their metadata.
	ManagedLabel = "captf.io/managed"
	// OwnerKindLabel is the Kind of the workload object a state Secret,
	// Lease or Job belongs to.
	OwnerKindLabel = "captf.infrastructure.cluster.x-k8s.io/owner-kind"
	// OwnerNameLabel is the name of that object (the first 16 hex of its
	// SHA-256 when longer than 63 characters).
	OwnerNameLabel = "captf.infrastructure.cluster.x-k8s.io/owner-name"
	// OperationLabel is the operation of a run Job and its pod.
	OperationLabel = "captf.infrastructure.cluster.x-k8s.io/op"
	// AttemptLabel is the attempt number of a run Job and its pod.
	AttemptLabel = "captf.infrastructure.cluster.x-k8s.io/attempt"
	// MirroredLabel ("true") marks a credentials mirror Secret.
	MirroredLabel = "captf.io/mirrored"
	// LeaseLabel is "run" or "cluster" on CAPTF's own Leases, telling them
	// from the backend's lock Lease.
	LeaseLabel = "captf.io/lease"
	// StateBackupLabel ("true") marks a state backup Secret.
	StateBackupLabel = "captf.io/state-backup"
	// StateBackupSuffixLabel is the state suffix a backup belongs to.
	StateBackupSuffixLabel = "captf.io/state-backup-suffix"
	// RetainedFromUIDLabel marks Secrets kept by deletionPolicy Retain; its
	// value is the deleted object's UID.
	RetainedFromUIDLabel = "captf.io/retained-from-uid"
	// PlanPhaseLabel is a TerraformPlan's phase; the source of truth for
	// terminal phases. Only the manager changes it.
	PlanPhaseLabel = "captf.io/plan-phase"
	// PlanReasonLabel is a TerraformPlan's reason.
	PlanReasonLabel = "captf.io/plan-reason"
	// DestructiveLabel ("true") marks a TerraformPlan that deletes or replaces.
	DestructiveLabel = "captf.io/destructive"
)

// Labels users set.
const (
	// VariablesLabel ("true") opts a ConfigMap or Secret in as a
	// variablesFrom source.
	VariablesLabel = "captf.io/variables"
	// RunnerLabel ("true") opts a ServiceAccount in as a custom runner account.
	RunnerLabel = "captf.io/runner"
	// OwnerNamespaceLabel on a Job and its pod is the namespace of the
	// object it runs for, when the Job runs in another one: an evacuated
	// destroy (EvacuatedFromUIDLabel).
	OwnerNamespaceLabel = "captf.io/owner-namespace"
	// WatchFilterLabel is Cluster API's label that --watch-filter selects
	// on: a manager started with --watch-filter=<value> reconciles only the
	// objects labelled with that value (and their Jobs carry it too).
	WatchFilterLabel = "cluster.x-k8s.io/watch-filter"
)

// Annotations users set on workload objects.
const (
	// RestoreStateAnnotation names the serial of a backup to restore.
	RestoreStateAnnotation = "captf.io/restore-state"
	// ConfirmNoResourcesAnnotation names the Job of an apply whose outcome is
	// unknown, confirming it created nothing.
	ConfirmNoResourcesAnnotation = "captf.io/confirm-no-resources"
)

// Annotations CAPTF sets.
const (
	// EndpointSourceAnnotation (TerraformCluster) is "user" or "module":
	// where spec.controlPlaneEndpoint came from.
	EndpointSourceAnnotation = "captf.io/endpoint-source"
	// RemediationRequestedAnnotation (Machine) marks a remediation request
	// CAPTF made.
	RemediationRequestedAnnotation = "captf.io/remediation-requested"
	// InputsHashAnnotation is the (h3:, keyed) inputs hash of the apply that wrote a
	// state (base state Secret, first backup chunk, apply/plan/restore Jobs,
	// inputs records).
	InputsHashAnnotation = "captf.io/inputs-hash"
	// SourceHashAnnotation is the SHA-256 of a mirror's source data.
	SourceHashAnnotation = "captf.io/source-hash"
	// IdentityAnnotation names the identity of a mirror or inputs record.
	IdentityAnnotation = "captf.io/identity"
	// IdentityKindAnnotation is "Secret" on inputs records of objects using
	// a local Secret.
	IdentityKindAnnotation = "captf.io/identity-kind"
	// ImageAnnotation is the image reference an inputs record was made for.
	ImageAnnotation = "captf.io/image"
	// ImageDigestAnnotation is the digest the applied record's Job ran.
	ImageDigestAnnotation = "captf.io/image-digest"
	// JobAnnotation names the Job an inputs record belongs to.
	JobAnnotation = "captf.io/job"
	// AppliedAnnotation ("true") on the attempt record: the object applied
	// at least once. Never cleared.
	AppliedAnnotation = "captf.io/applied"
	// MayHaveAppliedAnnotation on the attempt record: a failed apply may
	// have changed resources.
	MayHaveAppliedAnnotation = "captf.io/may-have-applied"
	// UnconfirmedApplyAnnotation names an apply Job that ended without a
	// result or vanished.
	UnconfirmedApplyAnnotation = "captf.io/unconfirmed-apply"
	// BookkeptAnnotation marks a finished Job whose result is recorded.
	BookkeptAnnotation = "captf.io/bookkept"
	// InterruptedAnnotation marks a bookkept Job stopped from outside.
	InterruptedAnnotation = "captf.io/interrupted"
	// DestructivePlanBlockedAnnotation marks an apply Job stopped before a
	// destructive plan.
	DestructivePlanBlockedAnnotation = "captf.io/destructive-plan-blocked"
	// PlanHashAnnotation is the hash of the plan a blocked apply made.
	PlanHashAnnotation = "captf.io/plan-hash"
	// PlanChangedAnnotation marks an approved apply whose plan changed.
	PlanChangedAnnotation = "captf.io/plan-changed"
	// PlanUnreadableAnnotation marks a plan Job without a readable plan.
	PlanUnreadableAnnotation = "captf.io/plan-unreadable"
	// DriftRemediationAnnotation marks a remediation apply Job.
	DriftRemediationAnnotation = "captf.io/drift-remediation"
	// ApprovedPlanAnnotation is the expected plan hash of an approved apply.
	ApprovedPlanAnnotation = "captf.io/approved-plan"
	// PlanAnnotation names the TerraformPlan an approved apply applies.
	PlanAnnotation = "captf.io/plan"
	// AfterInterruptedApplyAnnotation marks an apply started after an
	// interrupted or unconfirmed one.
	AfterInterruptedApplyAnnotation = "captf.io/after-interrupted-apply"
	// UnpullableImagesAnnotation on the attempt record lists, comma
	// separated, the images a destroy, refresh, drift or restore Job could
	// not pull (at most 3); a successful apply clears it.
	UnpullableImagesAnnotation = "captf.io/unpullable-images"
	// ImageFallbacksAnnotation on a destroy, refresh, drift or restore Job
	// lists, comma separated, the images left to try after its own.
	ImageFallbacksAnnotation = "captf.io/image-fallbacks"
	// AppliedClusterOutputsHashAnnotation is the SHA-256 of the cluster
	// exports (captf_cluster_outputs) a pool apply rendered: on the Job, and
	// on the pool's attempt record once such an apply succeeded.
	AppliedClusterOutputsHashAnnotation = "captf.io/applied-cluster-outputs-hash"
	// PendingClusterOutputsAnnotation on a pool's attempt record says, as
	// JSON, which exports change waits for approval while the pool holds
	// the exports of its last successful apply.
	PendingClusterOutputsAnnotation = "captf.io/pending-cluster-outputs"
	// PartialClusterOutputsAnnotation on a pool's attempt record says, as
	// JSON, which apply of an exports change failed after it started or
	// vanished: some members may render the new exports, so nothing is
	// held and every apply is guarded until one succeeds.
	PartialClusterOutputsAnnotation = "captf.io/partial-cluster-outputs"
	// ApprovalHashAnnotation on a pool's apply Job is the approval hash of
	// its inputs (without bootstrap_data) its exports guard names.
	ApprovalHashAnnotation = "captf.io/approval-hash"
	// RescuedSerialAnnotation on a bookkept apply Job is the serial of the
	// state the runner saved as a backup set because the backend rejected
	// it: no apply runs until a restore.
	RescuedSerialAnnotation = "captf.io/rescued-serial"
	// ImagePullFailedAnnotation marks a Job whose image was not pulled for
	// two minutes.
	ImagePullFailedAnnotation = "captf.io/image-pull-failed"
	// RunnerImagePullFailedAnnotation, with ImagePullFailedAnnotation, says
	// that the image not pulled was the runner's (the init container's,
	// --runner-image), not the module's.
	RunnerImagePullFailedAnnotation = "captf.io/runner-image-pull-failed"
	// OwnerUIDAnnotation on a Job is the UID of the object it runs for,
	// and OwnerAnnotation that object's name: a Job started while its
	// object is being deleted has no owner reference (the garbage
	// collector would stop it under foreground deletion), so these tie it
	// to its object.
	OwnerUIDAnnotation = "captf.io/owner-uid"
	OwnerAnnotation    = "captf.io/owner"
	// EvacuatedFromUIDLabel on a namespace CAPTF created is the UID of the
	// deleting object whose destroy runs there because the object's own
	// namespace is being deleted; CAPTF deletes it with that object.
	EvacuatedFromUIDLabel = "captf.io/evacuated-from-uid"
	// EvacuationNamespaceAnnotation on a deleting object records its
	// evacuation namespace, <name>/<uid>: the name before CAPTF creates it,
	// the UID after. Only the namespace of that name and UID is used and
	// deleted.
	EvacuationNamespaceAnnotation = "captf.io/evacuation-namespace"
	// EvacuatedFromAnnotation on such a namespace is the object it serves,
	// as <kind> <namespace>/<name>.
	EvacuatedFromAnnotation = "captf.io/evacuated-from"
	// LeaseOperationAnnotation is the operation holding a CAPTF Lease.
	LeaseOperationAnnotation = "captf.io/lease-op"
	// LeaseAcquiredAtAnnotation is when a CAPTF Lease was acquired.
	LeaseAcquiredAtAnnotation = "captf.io/lease-acquired-at"
	// LeaseJobCreatedAnnotation names the holder Job of a CAPTF Lease once
	// that Job was created: when the Job and its pods are gone, the holder
	// ran (its pod may still run somewhere) rather than was about to start.
	LeaseJobCreatedAnnotation = "captf.io/lease-job-created"
)

// Annotations of a state backup set's Secrets.
const (
	// StateBackupSerialAnnotation is the backed-up state's serial.
	StateBackupSerialAnnotation = "captf.io/state-backup-serial"
	// StateBackupLineageAnnotation is the backed-up state's lineage.
	StateBackupLineageAnnotation = "captf.io/state-backup-lineage"
	// StateBackupTakenAtAnnotation is when the backup was taken (RFC 3339).
	StateBackupTakenAtAnnotation = "captf.io/state-backup-taken-at"
	// StateBackupSourceJobAnnotation names the Job whose state it is, when known.
	StateBackupSourceJobAnnotation = "captf.io/state-backup-source-job"
	// StateBackupDigestAnnotation is the SHA-256 of the set's concatenated
	// compressed pieces.
	StateBackupDigestAnnotation = "captf.io/state-backup-digest"
	// StateBackupResourcesAnnotation counts the state's managed resources.
	StateBackupResourcesAnnotation = "captf.io/state-backup-resources"
	// StateBackupBytesAnnotation is a piece's size (its compressed state
	// bytes), so that backups are listed without their data.
	StateBackupBytesAnnotation = "captf.io/state-backup-bytes"
	// StateBackupSetAnnotation names the set's first Secret.
	StateBackupSetAnnotation = "captf.io/state-backup-set"
	// StateBackupChunkAnnotation is a piece's index, from 0.
	StateBackupChunkAnnotation = "captf.io/state-backup-chunk"
	// StateBackupChunksAnnotation is the number of pieces of the set.
	StateBackupChunksAnnotation = "captf.io/state-backup-chunks"
	// StateBackupOriginAnnotation says where a set came from;
	// "errored-state" marks a state the backend rejected, saved by the runner.
	StateBackupOriginAnnotation = "captf.io/state-backup-origin"
)

// Cluster API and clusterctl keys CAPTF reads or writes.
const (
	// ClusterNameLabel names the owning Cluster.
	ClusterNameLabel = "cluster.x-k8s.io/cluster-name"
	// PausedAnnotation pauses an object.
	PausedAnnotation = "cluster.x-k8s.io/paused"
	// ManagedByAnnotation marks externally managed infrastructure.
	ManagedByAnnotation = "cluster.x-k8s.io/managed-by"
	// ClonedFromNameAnnotation names the template an object was cloned from.
	ClonedFromNameAnnotation = "cluster.x-k8s.io/cloned-from-name"
	// RemediateMachineAnnotation asks Cluster API to remediate a Machine.
	RemediateMachineAnnotation = "cluster.x-k8s.io/remediate-machine"
	// ReplicasManagedByAnnotation on a MachinePool names who owns its replicas.
	ReplicasManagedByAnnotation = "cluster.x-k8s.io/replicas-managed-by"
	// AutoscalerMinSizeAnnotation is the autoscaler's minimum pool size.
	AutoscalerMinSizeAnnotation = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	// AutoscalerMaxSizeAnnotation is the autoscaler's maximum pool size.
	AutoscalerMaxSizeAnnotation = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
	// MoveLabel makes clusterctl move an object (state Secrets, backups).
	MoveLabel = "clusterctl.cluster.x-k8s.io/move"
	// MoveHierarchyLabel makes clusterctl move an object with its dependents.
	MoveHierarchyLabel = "clusterctl.cluster.x-k8s.io/move-hierarchy"
	// BlockMoveAnnotation holds clusterctl move while a Job is active.
	BlockMoveAnnotation = "clusterctl.cluster.x-k8s.io/block-move"
	// DeleteForMoveAnnotation marks a deletion made by clusterctl move.
	DeleteForMoveAnnotation = "clusterctl.cluster.x-k8s.io/delete-for-move"
	// ContractVersionLabel is the Cluster API contract label on every CRD.
	ContractVersionLabel = "cluster.x-k8s.io/v1beta2"
)

// Kind short codes, used in names of Jobs, records and state suffixes.
const (
	// KindShortCluster is the short code of TerraformCluster.
	KindShortCluster = "c"
	// KindShortMachine is the short code of TerraformMachine.
	KindShortMachine = "m"
	// KindShortMachinePool is the short code of TerraformMachinePool.
	KindShortMachinePool = "mp"
)
