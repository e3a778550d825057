package decide

// Chore is a housekeeping write: it keeps the object's Jobs, state
// Secrets and Cluster API owner in order whatever the decision. A pass
// chooses its chores from the same snapshot as its decision (Chores) and
// does them after deciding, in the order Chores gives, before its action:
// a chore that fails fails the pass, which then starts nothing.
type Chore string

// Chores, in the order a pass does them.
const (
	// ChoreRecordVanishedJob records that the Job status.activeJob names
	// is gone before it was bookkept: an apply's inputs are marked as
	// possibly applied (its outcome is unknown), its run lease is
	// released when every pod of it finished (else it is waited out, and a
	// cluster lease it holds is marked), then the Job is reported
	// interrupted. Also while paused or deleting. The first of the
	// first chores, done as soon as the pass has read its Jobs: the
	// records and the run lease read later are what it wrote.
	ChoreRecordVanishedJob Chore = "RecordVanishedJob"
	// ChoreCopyBackState copies the state an evacuated Job left in the
	// object's evacuation namespace back to the object's namespace (the
	// state-copied mark), once no Job runs nor holds the run lease; also
	// while paused. The first of the first chores (FirstChores), done as
	// soon as the pass has read its Jobs and the evacuation namespace:
	// the state read later is the copy. A state that grew a piece the
	// terminating namespace cannot take is kept there, and the object
	// holds: the chores after it are not done.
	ChoreCopyBackState Chore = "CopyBackState"
	// ChoreReleaseEvacuation lets go of the evacuation namespace being
	// deleted (its Secrets' protection), once the state is copied back,
	// no Job runs and (when a copy was left) none holds the run lease;
	// also while paused. A first chore.
	ChoreReleaseEvacuation Chore = "ReleaseEvacuation"
	// ChoreBookkeep records the outcomes of the finished Jobs not bookkept
	// yet, oldest first: status.lastRun, each Job's condition and events,
	// the records, the plans a Job left, the adoption of an applied state;
	// then each Job's per-run Secret and run lease go. It is a first chore
	// (FirstChores), chosen once the finished Jobs' pods are read: what
	// the pass observes after it reads what it writes.
	// Also while paused or deleting: a Job's outcome lives only as long as
	// the Job.
	ChoreBookkeep Chore = "Bookkeep"
	// ChoreAdoptRetained makes the state Secrets, records, plan key and
	// backups a deleted object of the same name retained the object's
	// (spec.adoptRetainedState): the retained-from label goes, the object's
	// owner reference and protection come. A first chore too, chosen once
	// the state Secrets are listed: the state the pass then reads is its
	// own.
	ChoreAdoptRetained Chore = "AdoptRetained"
	// ChoreMirrorCredentials writes the credentials mirror of the object's
	// identity in its namespace (created, or updated: its data, owner
	// references, protection), or deletes the mirror of an identity that
	// no longer allows the namespace. The decision took the credentials as
	// ready once written; a write that fails says so on CredentialsMirrored
	// and leaves them not ready, and the pass starts no Job; it does not
	// fail the pass (a deletion that fails does, once the other chores
	// are done), so it comes first: the mirror is written as soon as the
	// pass has decided, and other users of the shared mirror read it as
	// written.
	ChoreMirrorCredentials Chore = "MirrorCredentials"
	// ChoreBindRunner writes the runner RBAC the credentials step found
	// missing (the default ServiceAccount, the RoleBinding captf-runner or
	// the account's place in it), or takes off it an account that lost
	// its opt-in label. The decision took the runner as ready once
	// written; a write that fails leaves it not ready, and the pass starts
	// no Job. Like the mirror it is written as soon as the pass has
	// decided, as the RoleBinding is shared by the namespace's objects; a
	// refused write fails the pass only once the other chores are done.
	ChoreBindRunner Chore = "BindRunner"
	// ChoreDeleteStuckJob deletes the object's Job whose pod never started
	// and whose per-run Secret is gone, and releases its run lease: the
	// pass decided as if it were gone. Also while paused.
	ChoreDeleteStuckJob Chore = "DeleteStuckJob"
	// ChoreFallBackImage gives up on the image of the running non-apply
	// Job whose pod could not pull it within the grace, while another
	// image is left: the image joins the attempt record's unpullable list,
	// the Job is deleted (not a failure) and its run lease released. The
	// pass decided as if it were gone, with the image left out, so it
	// starts the Job again with the next image. Also while paused.
	ChoreFallBackImage Chore = "FallBackImage"
	// ChoreStopUnpulledJob stops the running Job whose pod could not pull
	// its image within the grace and has no image to fall back to: it
	// fails through its deadline, and so counts toward the backoff. Also
	// while paused.
	ChoreStopUnpulledJob Chore = "StopUnpulledJob"
	// ChorePruneJobs deletes the finished Jobs beyond the history limits,
	// also while paused: a paused object's Jobs still finish and are
	// bookkept.
	ChorePruneJobs Chore = "PruneJobs"
	// ChoreMakePlanKey writes the plan key the pass made in its memory
	// for an object that had none (captf-plankey-<kindshort>-<name>):
	// the pass keyed its hashes with it before deciding, and nothing it
	// keys leaves the pass before the key is written, so it comes before
	// every chore that writes what it keys (only the credentials' and the
	// Jobs' chores, which key nothing, come before it, so that a refused
	// key does not keep a stuck Job). A key another pass wrote meanwhile
	// fails the pass (its hashes are keyed with the wrong key). A deleting
	// object whose namespace the pass read as being deleted makes no key
	// to write (it keys with one for the pass only); one whose namespace
	// started being deleted since it was read finds the Secret refused
	// here, keeps the key for the pass only, and decides again with it.
	// Not done by a pass that decides nothing: the next pass makes its
	// key again.
	ChoreMakePlanKey Chore = "MakePlanKey"
	// ChoreRecordHeldExports keeps a pool's
	// captf.io/pending-cluster-outputs in step with the exports change
	// it holds back while its ExportsChange plan waits (written, or
	// removed once nothing is held), also while deleting: the pool
	// renders its inputs then too.
	ChoreRecordHeldExports Chore = "RecordHeldExports"
	// ChoreConfirmNoResources clears the unconfirmed apply the user
	// confirmed created nothing (captf.io/confirm-no-resources names it)
	// from the attempt record, and removes the annotation. The pass
	// decided as if it were forgotten.
	ChoreConfirmNoResources Chore = "ConfirmNoResources"
	// ChoreReownBackups gives the object's owner reference to the backup
	// sets a restore request's read found without it (a set the runner
	// rescued, or one of an earlier object of the name).
	ChoreReownBackups Chore = "ReownBackups"
	// ChoreReleaseSurplus lets go of the state pieces Terraform deleted
	// while shrinking the state, which the protection still keeps (the
	// pass read the state without them).
	ChoreReleaseSurplus Chore = "ReleaseSurplus"
	// ChoreProtectDeleting protects a deleting object's state pieces,
	// backups and records that lack the protection.
	ChoreProtectDeleting Chore = "ProtectDeleting"
	// ChoreReownState gives the object's owner reference and protection
	// back to its state Secrets (and then records and plan key) that lack
	// either.
	ChoreReownState Chore = "ReownState"
	// ChoreBackUpState copies a state serial not backed up yet into a
	// backup set, prunes the sets beyond --state-backups and lists them in
	// the status.
	ChoreBackUpState Chore = "BackUpState"
	// ChoreSyncOwner is the role's after-step on its Cluster API owner
	// (a pool's autoscaling write-back), for a kind that has one.
	ChoreSyncOwner Chore = "SyncOwner"
	// ChoreSyncRemediation writes the remediation request, or its
	// withdrawal, on a provisioned machine's Machine, for a kind that
	// remediates.
	ChoreSyncRemediation Chore = "SyncRemediation"
	// ChoreSyncPlans writes the TerraformPlan phases the pass moved its
	// plans to before deciding: an approval recorded, a moot plan
	// superseded, an approved apply's outcome, a late approval marked.
	// Also while paused or deleting (approvals only).
	ChoreSyncPlans Chore = "SyncPlans"
	// ChorePrunePlans deletes the terminal TerraformPlans beyond the
	// newest ten (not while paused or deleting).
	ChorePrunePlans Chore = "PrunePlans"
)

// FailsLast: the chore's failure fails the pass only once the chores
// after it are done. The credentials chores (the mirror, and the
// RoleBinding shared by the namespace's objects) are written first, but
// a refused write must not keep the object's own chores from being done.
func (c Chore) FailsLast() bool { return c == ChoreMirrorCredentials || c == ChoreBindRunner }

// Upkeep is what the chores are chosen from, beyond the snapshot's
// Deleting, JobActive, State and OwnerMismatch.
type Upkeep struct {
	// VanishedJob: the Job status.activeJob names was not found, live,
	// before it was bookkept (FirstChores).
	VanishedJob bool
	// Unbookkept counts the finished Jobs whose outcome is not recorded
	// yet (FirstChores).
	Unbookkept int
	// Paused: the object or its Cluster is paused.
	Paused bool
	// EvacuatedCopy: an evacuated Job left its state to copy back, no
	// Job runs and none holds the run lease; EvacuationEnding: the
	// object's evacuation namespace is being deleted and no Job runs
	// (FirstChores).
	EvacuatedCopy, EvacuationEnding bool
	// AdoptsRetained: the state Secrets are retained from a deleted object
	// of the same name (State is StateRetained), and the object's
	// spec.adoptRetainedState says to adopt them (FirstChores).
	AdoptsRetained bool
	// PlanKeyUnsaved: the object had no plan key and the pass made one in
	// its memory.
	PlanKeyUnsaved bool
	// HoldDue: a pool's attempt record does not say the exports change
	// it holds back as it is (rendered while no Job runs).
	HoldDue bool
	// StuckJob: the object's Job never started its pod and lost its
	// per-run Secret (JobActive is then false).
	StuckJob bool
	// FallbackJob: the running Job's pod could not pull its image within
	// the grace, and another image is left (JobActive is then false).
	FallbackJob bool
	// UnpulledJob: the running Job's pod could not pull its image within
	// the grace, and no image is left to fall back to.
	UnpulledJob bool
	// PrunableJobs counts the finished Jobs beyond the history limits.
	PrunableJobs int
	// SurplusPieces counts the protected state pieces the state read left
	// out as deleted by Terraform.
	SurplusPieces int
	// NoResourcesConfirmed: captf.io/confirm-no-resources names the
	// unconfirmed apply (not read while paused).
	NoResourcesConfirmed bool
	// StrayBackups: a backup set the pass read (for a restore request)
	// lacks the object's owner reference.
	StrayBackups bool
	// StraySecrets: a state Secret lacks the object's owner reference or
	// protection.
	StraySecrets bool
	// StateSerial is the serial of the state read (0: none).
	StateSerial int64
	// BackedUp: the status the pass read lists backups and had observed
	// StateSerial already.
	BackedUp bool
	// Provisioned: status.initialization.provisioned.
	Provisioned bool
	// PlanMoves counts the TerraformPlans the pass moved to another phase
	// before deciding; PrunablePlans the terminal ones beyond the newest
	// ten (0 while paused or deleting).
	PlanMoves, PrunablePlans int
	// SyncsOwner: the kind has an after-step on its owner; Remediates: it
	// writes remediation requests (roles.Remediator).
	SyncsOwner, Remediates bool
	// MirrorDue: the credentials step found the mirror to write or to
	// delete; RunnerUnbound: it found runner RBAC to write (the step runs
	// for a live object that is not paused).
	MirrorDue, RunnerUnbound bool
}

// FirstChores returns the chores a pass does as soon as it observed what
// chooses them, before it observes the rest, which reads what they write:
// once its Jobs are read, the record of the Job that vanished; once its
// evacuation namespace is read, the copy back of an evacuated Job's state
// and the release of an evacuation namespace being deleted, then the
// bookkeeping of the finished Jobs (the records, the state, the plans);
// once its state Secrets are listed while no Job runs, the adoption of a
// retained state the object adopts. Only s's JobActive, State and
// Upkeep's VanishedJob, Unbookkept, EvacuatedCopy, EvacuationEnding and
// AdoptsRetained are read.
func FirstChores(s Snapshot) []Chore {
	var out []Chore
	if s.Upkeep.VanishedJob {
		out = append(out, ChoreRecordVanishedJob)
	}
	if s.Upkeep.EvacuatedCopy && !s.JobActive {
		out = append(out, ChoreCopyBackState)
	}
	if s.Upkeep.EvacuationEnding && !s.JobActive {
		out = append(out, ChoreReleaseEvacuation)
	}
	if s.Upkeep.Unbookkept > 0 {
		out = append(out, ChoreBookkeep)
	}
	if s.State == StateRetained && s.Upkeep.AdoptsRetained && !s.JobActive {
		out = append(out, ChoreAdoptRetained)
	}
	return out
}

// Chores returns the chores of the pass that observed s, after its first
// chores (FirstChores), in order: a live, unpaused object's credentials
// first (mirror, runner RBAC: shared by the namespace's objects, they are
// written as soon as the pass has decided, and neither stops the chores
// after it), then the Jobs' chores (a stuck Job must go whatever fails
// after), the plan key the pass made (before anything it keys is
// written), a pool's held exports change, the state Secrets and the
// owner, and the plans' chores last. A paused pass, or one that failed
// before its chores, only deletes a stuck Job, falls back from an image
// that cannot be pulled or stops the Job that has no other, prunes its
// Jobs and writes its plans' moves. While a Job runs, or the state is retained
// for another object, the state Secrets are left as they are. A deleting
// object's state is protected, never re-owned, backed up or synced.
func Chores(s Snapshot) []Chore {
	credentials := !s.Upkeep.Paused && !s.Deleting
	var out []Chore
	if credentials && s.Upkeep.MirrorDue {
		out = append(out, ChoreMirrorCredentials)
	}
	if credentials && s.Upkeep.RunnerUnbound {
		out = append(out, ChoreBindRunner)
	}
	out = append(out, jobChores(s.Upkeep)...)
	if s.Upkeep.PlanKeyUnsaved {
		out = append(out, ChoreMakePlanKey)
	}
	if s.Upkeep.HoldDue {
		out = append(out, ChoreRecordHeldExports)
	}
	out = append(out, keeping(s)...)
	if s.Upkeep.PlanMoves > 0 {
		out = append(out, ChoreSyncPlans)
	}
	if s.Upkeep.PrunablePlans > 0 {
		out = append(out, ChorePrunePlans)
	}
	return out
}

// jobChores is the chores of the object's Jobs, also while paused.
func jobChores(u Upkeep) []Chore {
	var out []Chore
	if u.StuckJob {
		out = append(out, ChoreDeleteStuckJob)
	}
	if u.FallbackJob {
		out = append(out, ChoreFallBackImage)
	}
	if u.UnpulledJob {
		out = append(out, ChoreStopUnpulledJob)
	}
	if u.PrunableJobs > 0 {
		out = append(out, ChorePruneJobs)
	}
	return out
}

// keeping is the chores of the state Secrets and the owner.
func keeping(s Snapshot) []Chore {
	u := s.Upkeep
	var out []Chore
	if u.Paused {
		return out
	}
	if u.NoResourcesConfirmed {
		out = append(out, ChoreConfirmNoResources)
	}
	if u.StrayBackups {
		out = append(out, ChoreReownBackups)
	}
	if s.JobActive || s.State == StateRetained {
		return out
	}
	if u.SurplusPieces > 0 {
		out = append(out, ChoreReleaseSurplus)
	}
	if s.Deleting {
		if s.Destroyed() {
			// Nothing left to keep: the cleanup deletes the state and
			// records, and may have let go of them already (another
			// manager's).
			return out
		}
		return append(out, ChoreProtectDeleting)
	}
	if u.StraySecrets {
		out = append(out, ChoreReownState)
	}
	if s.State != StateReadable {
		return out
	}
	if u.StateSerial >= 1 && !u.BackedUp {
		out = append(out, ChoreBackUpState)
	}
	if s.OwnerMismatch {
		return out
	}
	if u.SyncsOwner {
		out = append(out, ChoreSyncOwner)
	}
	if u.Remediates && u.Provisioned {
		out = append(out, ChoreSyncRemediation)
	}
	return out
}
