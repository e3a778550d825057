package decide

import "time"

// Operation is one of the runner's operations.
type Operation string

// Operations a Job runs.
const (
	OpApply   Operation = "apply"
	OpPlan    Operation = "plan"
	OpDestroy Operation = "destroy"
	OpRefresh Operation = "refresh"
	OpDrift   Operation = "drift"
	OpRestore Operation = "restore"
)

// StateStatus is what reading the object's state found.
type StateStatus string

// State statuses, from the state reader and the hold rules.
const (
	StateAbsent     StateStatus = "Absent"     // no Secret
	StateReadable   StateStatus = "Readable"   // read and decoded
	StateUnreadable StateStatus = "Unreadable" // corrupt, encrypted or inconsistent
	StateRetained   StateStatus = "Retained"   // retained by an earlier object of the name
)

// PlanStatus is where the plan of the current inputs stands.
type PlanStatus string

// Plan statuses.
const (
	PlanNone     PlanStatus = ""         // no plan of these inputs: plan first
	PlanPending  PlanStatus = "Pending"  // a TerraformPlan waits for approval
	PlanApproved PlanStatus = "Approved" // its apply may run
	PlanEmpty    PlanStatus = "Empty"    // planned no change: the apply runs
)

// FinishedJob is one finished, retained Job of the object.
type FinishedJob struct {
	// Name is the Job's name, for messages.
	Name       string
	Op         Operation
	Succeeded  bool
	FinishedAt time.Time
	InputsHash string
	// Blocked: a guarded apply stopped before a destructive plan.
	Blocked bool
	// PlanEnded: the TerraformPlan of a blocked apply is terminal
	// (superseded, failed, applied) or gone: the block no longer holds.
	PlanEnded bool
	// PlanChanged: an approved apply planned other changes.
	PlanChanged bool
	// Interrupted: stopped from outside (drain, eviction, Job deletion), not
	// by its deadline. Not a failure: retried at once.
	Interrupted bool
	// Remediation: a drift remediation apply.
	Remediation bool
	// Rescued: the backend rejected the state the apply wrote, and the
	// runner saved it as a backup set to restore.
	Rescued bool
	// PlanHash is the fingerprint a plan Job reported.
	PlanHash string
	// PlanUnreadable: a plan Job succeeded without a readable plan.
	PlanUnreadable bool
}

// CountsAsFailure reports whether the Job counts toward backoff: a plan
// Job that succeeded without a readable plan does, so that it is never
// planned again in a loop.
func (j FinishedJob) CountsAsFailure() bool {
	return (!j.Succeeded || j.PlanUnreadable) && !j.Blocked && !j.PlanChanged && !j.Interrupted
}

// Schedule is what the periodic checks need.
type Schedule struct {
	// UID seeds the jitter; empty means no jitter.
	UID string
	// CreatedAt is the object's creation time.
	CreatedAt time.Time
	// LastSuccessfulApply, LastRefresh and LastDriftCheck are zero when
	// never.
	LastSuccessfulApply time.Time
	LastRefresh         time.Time
	LastDriftCheck      time.Time
	// RefreshAfterApplyDue: a successful apply (machine or pool) whose own
	// health reading was not definite has not been followed by a refresh.
	RefreshAfterApplyDue bool
	// HealthPending counts consecutive "pending" health readings (0: none).
	HealthPending int
	// MembershipConverging: a pool's provider ID list does not match its
	// replicas yet.
	MembershipConverging bool
	// MembershipInterval is a pool's membership refresh interval (0: not a
	// pool).
	MembershipInterval time.Duration
	// HealthCheckInterval is set when remediation annotates the Machine.
	HealthCheckInterval time.Duration
	// DriftInterval between drift checks; 0 disables them.
	DriftInterval time.Duration
}

// Snapshot is everything Decide needs, gathered by Observe.
type Snapshot struct {
	Now time.Time
	// Mutable kinds (TerraformCluster, TerraformMachinePool) re-apply on
	// input changes; a TerraformMachine never does.
	Mutable bool
	// Deleting: the object has a deletion timestamp.
	Deleting bool
	// Retain: the effective deletionPolicy is Retain.
	Retain bool
	// JobActive: a Job of the object is running (or not yet finished).
	JobActive bool
	// Dependents: machines and pools a deleting TerraformCluster waits for.
	Dependents int
	// RestoreRequested: captf.io/restore-state names a complete backup
	// whose serial was not consumed yet.
	RestoreRequested bool
	State            StateStatus
	// StateInputsHash is the captf.io/inputs-hash of the state ("" when
	// none).
	StateInputsHash string
	// EverApplied: provisioned, an applied marker or record, or a backup.
	EverApplied bool
	// DestroyReportedAt is when the object's status came to say that its
	// destroy succeeded (ApplyJobSucceeded True/DestroySucceeded, which the
	// outcome of any later apply or destroy would have replaced); zero when
	// it does not. It tells a deleting object whose destroy Job is gone
	// before its cleanup ended (the Job's TTL, a hand, its evacuation
	// namespace deleted first) that it was destroyed.
	DestroyReportedAt time.Time
	// UnconfirmedApply: an apply Job ended without a result after its
	// runner started, or vanished, and no apply started after it has
	// succeeded (captf.io/unconfirmed-apply): an apply stays due, and
	// without a state nobody knows whether it created resources.
	UnconfirmedApply bool
	// InputsHash of the current inputs ("" when they cannot be built).
	InputsHash string
	// InputsTooLarge: the current inputs were rendered but exceed the cap
	// (InputsHash is then "").
	InputsTooLarge bool
	// OwnerMismatch: the object's Cluster API owner does not reference it
	// back; nothing starts for it (its deletion proceeds).
	OwnerMismatch bool
	// DeletionPolicyUnresolved: a deleting object sets no deletionPolicy
	// and its TerraformCluster cannot be found to inherit one.
	DeletionPolicyUnresolved bool
	// PolicyInvalid: the effective jobs policy does not validate;
	// SecurityInvalid: it weakens a Job's isolation (whatever admission
	// let through).
	PolicyInvalid, SecurityInvalid bool
	// NamespaceTerminating: the object's namespace is being deleted (read
	// for a deleting object only).
	NamespaceTerminating bool
	// CredentialsNotReady: the credentials of the object's current
	// identity, or the runner's RBAC, are not ready (their conditions say
	// why). Set for a live object, whose credentials step runs before
	// deciding; a deleting object's are checked as its Job starts.
	CredentialsNotReady bool
	// RecordedIdentity: the durable inputs record a Job other than an
	// apply, plan or restore renders was written with another identity
	// than the current one; that Job checks its credentials as it starts.
	RecordedIdentity bool
	// DurableInputsMissing: no inputs record can render a Job other than
	// an apply, plan or restore (a mutable object with current inputs
	// renders those).
	DurableInputsMissing bool
	// Evacuation: the manager may run a destroy in an evacuation namespace
	// when the object's own is being deleted (it watches every namespace).
	Evacuation bool
	// ApprovedPlan: a live TerraformPlan of the current inputs is
	// approved, so their blocked apply may run (with --expect-plan).
	ApprovedPlan bool
	// PendingPlan: a live, unapproved Destructive or ExportsChange
	// TerraformPlan names the current inputs: their apply is blocked even
	// when its Job is gone (clusterctl move moves plans, not Jobs).
	PendingPlan bool
	// RescueRecorded: the attempt record says a rescued state waits for its
	// restore (captf.io/rescued-serial), whatever the Job history keeps.
	RescueRecorded bool
	// Manual: a TerraformCluster with applyPolicy Manual: every apply but
	// the first goes through a plan Job and waits for its approval.
	Manual bool
	// Plan is where the plan of the current inputs stands under Manual.
	Plan PlanStatus
	// History holds the object's retained finished Jobs, any order.
	History []FinishedJob
	// FailedJobsHistoryLimit bounds the backoff (values below 1 act as 1).
	FailedJobsHistoryLimit int
	// DriftFound: the newest drift check found drift; Remediate: act on it.
	DriftFound bool
	Remediate  bool
	Schedule   Schedule
	Timing     Timing
	// Upkeep is what the pass's chores are chosen from (Chores).
	Upkeep Upkeep
}

// Timing holds the table's durations a manager may shorten (tests do);
// a zero field is its documented default (Effective).
type Timing struct {
	// RetryBase is the backoff after a first failure, doubling with each
	// further one up to RetryMax (RetryBase when 0).
	RetryBase time.Duration
	// The look-again intervals of the waits that never back off: a Job
	// running (ActiveJobRequeue when 0), a gate that frees by itself
	// (GateRequeue), a state held (StateRequeue), an approval
	// (ApprovalRequeue), what only a change fixes (PolicyRequeue) and a
	// Job slot (SlotRequeue, before its jitter). Each is a backstop: the
	// event a wait is for (a Job finished, a lease released, a slot
	// freed, an approval) wakes it sooner.
	ActiveJob, Gate, State, Approval, Policy, Slot time.Duration
}

// Effective is t with each zero or negative field set to its default.
func (t Timing) Effective() Timing {
	or := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	or(&t.RetryBase, RetryBase)
	or(&t.ActiveJob, ActiveJobRequeue)
	or(&t.Gate, GateRequeue)
	or(&t.State, StateRequeue)
	or(&t.Approval, ApprovalRequeue)
	or(&t.Policy, PolicyRequeue)
	or(&t.Slot, SlotRequeue)
	return t
}
