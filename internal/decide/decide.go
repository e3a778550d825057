package decide

import (
	"crypto/sha256"
	"encoding/binary"
	"sort"
	"time"
)

// Action is what a pass does.
type Action string

// Actions of a Decision.
const (
	// ActionStartJob starts a Job of Decision.Op.
	ActionStartJob Action = "StartJob"
	// ActionWait starts nothing and looks again after Decision.Requeue.
	ActionWait Action = "Wait"
	// ActionRelease removes the finalizer of a deleting object (cleanup
	// first) without a destroy: nothing to destroy.
	ActionRelease Action = "Release"
	// ActionRetain releases a deleting object keeping its state
	// (deletionPolicy Retain).
	ActionRetain Action = "Retain"
)

// Reason names the decision table row that decided; it is the reason of
// the captf_reconcile_op_decisions_total metric and, for waits, of the
// condition that reports them.
type Reason string

// Reasons, one per row of the decision and schedule tables.
const (
	ReasonJobActive              Reason = "JobActive"
	ReasonRestoreRequested       Reason = "RestoreRequested"
	ReasonDependentsExist        Reason = "DependentsExist"
	ReasonRetain                 Reason = "DeletionPolicyRetain"
	ReasonDeletionHeld           Reason = "DeletionHeld"
	ReasonDeletingWithoutState   Reason = "DeletingWithoutState"
	ReasonHoldsRetainedState     Reason = "HoldsRetainedState"
	ReasonDeleting               Reason = "Deleting"
	ReasonDestroyed              Reason = "Destroyed"
	ReasonRetainedStateFound     Reason = "RetainedStateFound"
	ReasonStateUnreadable        Reason = "StateUnreadable"
	ReasonStateLost              Reason = "StateLost"
	ReasonApplyOutcomeUnknown    Reason = "ApplyOutcomeUnknown"
	ReasonStateRescued           Reason = "StateRescued"
	ReasonUnconfirmedApply       Reason = "UnconfirmedApply"
	ReasonNoState                Reason = "NoState"
	ReasonStateWithoutInputsHash Reason = "StateWithoutInputsHash"
	ReasonInputsChanged          Reason = "InputsChanged"
	ReasonLastApplyFailed        Reason = "LastApplyFailed"
	ReasonDriftRemediation       Reason = "DriftRemediation"
	ReasonAwaitingApproval       Reason = "AwaitingApproval"
	ReasonPlanAwaitingApproval   Reason = "PlanAwaitingApproval"
	ReasonRefreshAfterApply      Reason = "RefreshAfterApply"
	ReasonMembershipConverging   Reason = "MembershipConverging"
	ReasonHealthPending          Reason = "HealthPending"
	ReasonMembershipRefreshDue   Reason = "MembershipRefreshDue"
	ReasonHealthCheckDue         Reason = "HealthCheckDue"
	ReasonDriftDue               Reason = "DriftDue"
	ReasonUpToDate               Reason = "UpToDate"
	// Admission rows: a due Job that cannot start yet.
	ReasonOwnerMismatch            Reason = "OwnerMismatch"
	ReasonDeletionPolicyUnresolved Reason = "DeletionPolicyUnresolved"
	ReasonInputsUnavailable        Reason = "InputsUnavailable"
	ReasonInputsTooLarge           Reason = "InputsTooLarge"
	ReasonJobPolicyInvalid         Reason = "JobPolicyInvalid"
	ReasonNamespaceTerminating     Reason = "NamespaceTerminating"
	ReasonCredentialsNotReady      Reason = "CredentialsNotReady"
	ReasonDurableInputsMissing     Reason = "DurableInputsMissing"
)

// Backoff returns the reason of a due operation waiting out its backoff,
// e.g. InputsChangedBackoff.
func Backoff(r Reason) Reason { return r + "Backoff" }

// Requeue intervals of the waits that never back off (the defaults of
// Timing).
const (
	ActiveJobRequeue = time.Minute
	GateRequeue      = 30 * time.Second
	StateRequeue     = time.Minute
	ApprovalRequeue  = 10 * time.Minute
	// PolicyRequeue re-checks what only a user's change fixes: inputs
	// over the cap, an invalid jobs policy, missing records.
	PolicyRequeue = 10 * time.Minute
	RetryBase     = time.Minute
	RetryMax      = 10 * time.Minute
	// MembershipConvergingEvery spaces a converging pool's refreshes.
	MembershipConvergingEvery = 30 * time.Second
	// HealthPendingBase doubles per pending reading up to HealthPendingMax.
	HealthPendingBase = 30 * time.Second
	HealthPendingMax  = 5 * time.Minute
)

// Decision is what one pass does.
type Decision struct {
	Action Action
	Op     Operation
	Reason Reason
	// Requeue is when to look again (0: only on a change).
	Requeue time.Duration
	// Evacuate: the Job runs in the object's evacuation namespace, its own
	// being deleted.
	Evacuate bool
}

func start(op Operation, r Reason) Decision {
	return Decision{Action: ActionStartJob, Op: op, Reason: r}
}

func wait(r Reason, after time.Duration) Decision {
	return Decision{Action: ActionWait, Reason: r, Requeue: after}
}

// Decide applies the decision table, first matching row wins, then the
// schedule when no operation is due; a Job decided then goes through the
// admission rows (admit).
func Decide(s Snapshot) Decision {
	s.Timing = s.Timing.Effective()
	return s.admit(decideRows(s))
}

func decideRows(s Snapshot) Decision {
	switch {
	case s.Deleting && s.DeletionPolicyUnresolved:
		return wait(ReasonDeletionPolicyUnresolved, s.Timing.Gate)
	case !s.Deleting && s.OwnerMismatch:
		return wait(ReasonOwnerMismatch, s.Timing.Gate)
	}
	if s.JobActive {
		return wait(ReasonJobActive, s.Timing.ActiveJob)
	}
	if s.Deleting {
		return decideDeletion(s)
	}
	if d, ok := s.hold(); ok {
		return d
	}
	if r, ok := s.applyDue(); ok {
		if r == ReasonDriftRemediation && s.remediationBlocked() {
			return s.schedule() // a blocked remediation does not pause drift checks
		}
		return s.apply(r, r == ReasonDriftRemediation)
	}
	return s.schedule()
}

// admit holds back a Job the table decided while something only a change
// can fix stops it, in this order: a jobs policy that does not validate
// (not for a destroy or a restore), an apply or plan whose current inputs
// cannot be built (DependenciesReady says why) or exceed the cap, a
// namespace being deleted (it takes no new Job; a destroy runs in the
// object's evacuation namespace instead where the manager may make one), a
// policy that weakens the Job's isolation (any operation), credentials or
// runner RBAC not ready for the identity the Job runs with (their
// conditions say why), a Job rendering durable inputs that no record
// holds. The wait keeps the operation it holds.
//
// What only starting the Job can tell is decided as it starts: the
// credentials of an identity recorded with the durable inputs (and of a
// deleting object's), the runtime of a new image, a Job slot, the run
// lease and the cluster operation gate (each taken, not only read); what
// each of those waits is, is Stopped's.
func (s Snapshot) admit(d Decision) Decision {
	if d.Action != ActionStartJob {
		return d
	}
	held := func(r Reason, after time.Duration) Decision {
		return Decision{Action: ActionWait, Op: d.Op, Reason: r, Requeue: after}
	}
	switch {
	case s.PolicyInvalid && d.Op != OpDestroy && d.Op != OpRestore:
		return held(ReasonJobPolicyInvalid, s.Timing.Policy)
	case (d.Op == OpApply || d.Op == OpPlan) && s.InputsHash == "" && s.InputsTooLarge:
		return held(ReasonInputsTooLarge, s.Timing.Policy)
	case (d.Op == OpApply || d.Op == OpPlan) && s.InputsHash == "":
		return held(ReasonInputsUnavailable, s.Timing.Gate)
	case s.Deleting && s.NamespaceTerminating && (d.Op != OpDestroy || !s.Evacuation):
		return held(ReasonNamespaceTerminating, s.Timing.Gate)
	case s.SecurityInvalid:
		return held(ReasonJobPolicyInvalid, s.Timing.Policy)
	case s.CredentialsNotReady && (rendersCurrent(d.Op) || s.DurableInputsMissing || !s.RecordedIdentity):
		return held(ReasonCredentialsNotReady, s.Timing.Gate)
	case !rendersCurrent(d.Op) && s.DurableInputsMissing:
		return held(ReasonDurableInputsMissing, s.Timing.Policy)
	}
	d.Evacuate = s.Deleting && s.NamespaceTerminating
	return d
}

// rendersCurrent: a Job of op renders the object's current inputs (a
// restore its own) and runs with its current identity; the others render
// a durable inputs record.
func rendersCurrent(op Operation) bool {
	return op == OpApply || op == OpPlan || op == OpRestore
}

// hold is the row that keeps a live object from any apply: a restore to
// run, or a state nobody may apply on.
func (s Snapshot) hold() (Decision, bool) {
	switch {
	case s.RestoreRequested:
		return start(OpRestore, ReasonRestoreRequested), true
	case s.State == StateRetained:
		return wait(ReasonRetainedStateFound, s.Timing.State), true
	case s.State == StateUnreadable:
		return wait(ReasonStateUnreadable, s.Timing.State), true
	case s.rescuePending():
		return wait(ReasonStateRescued, s.Timing.State), true
	case s.State == StateAbsent && s.EverApplied:
		return wait(ReasonStateLost, s.Timing.State), true
	case s.State == StateAbsent && s.UnconfirmedApply:
		return wait(ReasonApplyOutcomeUnknown, s.Timing.State), true
	}
	return Decision{}, false
}

// applyDue is the apply row of the decision table that matches, before
// approvals and backoff have their say.
func (s Snapshot) applyDue() (Reason, bool) {
	switch {
	case s.State == StateAbsent:
		return ReasonNoState, true
	case s.StateInputsHash == "":
		return ReasonStateWithoutInputsHash, true
	case s.Mutable && s.InputsHash != "" && s.InputsHash != s.StateInputsHash:
		return ReasonInputsChanged, true
	case s.UnconfirmedApply:
		return ReasonUnconfirmedApply, true
	case s.Mutable && s.newestApplyFailed():
		return ReasonLastApplyFailed, true
	case s.DriftFound && s.Remediate && s.RemediationFailures() < s.failedLimit():
		return ReasonDriftRemediation, true
	}
	return "", false
}

// NoApplyDue: a live object with no Job running, no hold and no apply row
// matching; a plan waiting for approval is moot then.
func (s Snapshot) NoApplyDue() bool {
	if s.JobActive || s.Deleting {
		return false
	}
	if _, held := s.hold(); held {
		return false
	}
	_, due := s.applyDue()
	return !due
}

// decideDeletion is the deletion table: dependents first, then Retain,
// then restore of a held state, then the state decides.
func decideDeletion(s Snapshot) Decision {
	held := s.State == StateUnreadable || (s.State == StateAbsent && (s.EverApplied || s.UnconfirmedApply)) || s.rescuePending()
	switch {
	case s.Dependents > 0:
		return wait(ReasonDependentsExist, s.Timing.Gate)
	case s.Retain:
		return Decision{Action: ActionRetain, Reason: ReasonRetain}
	case s.Destroyed():
		return Decision{Action: ActionRelease, Reason: ReasonDestroyed}
	case s.RestoreRequested && held:
		return start(OpRestore, ReasonRestoreRequested)
	case s.State == StateRetained:
		return Decision{Action: ActionRelease, Reason: ReasonHoldsRetainedState}
	case held:
		return wait(ReasonDeletionHeld, s.Timing.State)
	case s.State == StateAbsent:
		return Decision{Action: ActionRelease, Reason: ReasonDeletingWithoutState}
	}
	return s.withBackoff(OpDestroy, start(OpDestroy, ReasonDeleting))
}

// remediationBlocked: the newest apply is a remediation of the current
// inputs the guard stopped, and no plan of them is approved: remediating
// again would only block again. The schedule goes on (a blocked
// remediation does not pause drift checks).
func (s Snapshot) remediationBlocked() bool {
	if s.PendingPlan {
		return true
	}
	j := s.Newest(OpApply)
	return j != nil && j.Remediation && j.Blocked && !j.PlanEnded && j.InputsHash == s.InputsHash && !s.ApprovedPlan
}

// rescuePending: the newest apply's state was saved as a backup set
// because the backend rejected it, and no restore succeeded since: the
// stored state misses what that apply created, so neither an apply nor a
// destroy may run on it.
func (s Snapshot) rescuePending() bool {
	if s.RescueRecorded {
		return true
	}
	a := s.Newest(OpApply)
	if a == nil || !a.Rescued {
		return false
	}
	r := s.Newest(OpRestore)
	return r == nil || !r.Succeeded || r.FinishedAt.Before(a.FinishedAt)
}

// Destroyed: the newest destroy succeeded and nothing applied since (the
// cleanup that follows deletes the state). With that destroy Job gone (no
// destroy Job left, or only ones that finished before), the deleting
// object's status says it (DestroyReportedAt), as long as the cleanup has
// begun (the state is gone, or in part): a state still read whole is
// destroyed again rather than released on the status's word, and a state
// another object retained is never taken for this one's.
func (s Snapshot) Destroyed() bool {
	d := s.Newest(OpDestroy)
	if d != nil && d.Succeeded {
		a := s.Newest(OpApply)
		return a == nil || a.FinishedAt.Before(d.FinishedAt)
	}
	reported := !s.DestroyReportedAt.IsZero() && (d == nil || d.FinishedAt.Before(s.DestroyReportedAt))
	return s.Deleting && reported && (s.State == StateAbsent || s.State == StateUnreadable)
}

// apply decides an apply for reason. Under applyPolicy Manual (once a
// state exists) it plans first and waits for the plan's approval; an
// approved or empty plan applies. Otherwise it waits while the newest apply
// of the same inputs stopped before a destructive plan not approved yet.
// Either backs off after failures.
func (s Snapshot) apply(r Reason, remediation bool) Decision {
	if s.Manual && s.State != StateAbsent {
		switch s.Plan {
		case PlanPending:
			return wait(ReasonPlanAwaitingApproval, s.Timing.Approval)
		case PlanNone:
			return s.withBackoff(OpPlan, start(OpPlan, r))
		}
		return s.withBackoff(OpApply, start(OpApply, r))
	}
	if s.PendingPlan && !remediation {
		return wait(ReasonAwaitingApproval, s.Timing.Approval)
	}
	if j := s.Newest(OpApply); j != nil && j.Blocked && !j.PlanEnded && j.InputsHash == s.InputsHash && !remediation && !s.ApprovedPlan {
		if j.PlanHash != "" {
			return wait(ReasonAwaitingApproval, s.Timing.Approval)
		}
		// The runner reported no plan to approve: nothing can release it
		// but another guarded apply, after RetryMax.
		if due := j.FinishedAt.Add(RetryMax); s.Now.Before(due) {
			return wait(ReasonAwaitingApproval, due.Sub(s.Now))
		}
	}
	return s.withBackoff(OpApply, start(OpApply, r))
}

// withBackoff replaces a due Job with a wait while its operation backs off:
// after n consecutive failures, min(1m*2^(n-1), 10m) from the newest
// failure's finish, and 10m as soon as n reaches the failed history limit
// (1m is Timing.RetryBase when set). s.Timing is Effective (Decide).
func (s Snapshot) withBackoff(op Operation, d Decision) Decision {
	n, last := s.ConsecutiveFailures(op)
	if n == 0 {
		return d
	}
	delay := RetryMax
	if n < s.failedLimit() {
		delay = min(s.Timing.RetryBase<<(n-1), RetryMax)
	}
	if due := last.Add(delay); s.Now.Before(due) {
		return wait(Backoff(d.Reason), due.Sub(s.Now))
	}
	return d
}

func (s Snapshot) failedLimit() int { return max(s.FailedJobsHistoryLimit, 1) }

// RemediationCapped: as many applies failed since the newest drift check
// as the failed history limit allows, so no remediation is due.
func (s Snapshot) RemediationCapped() bool { return s.RemediationFailures() >= s.failedLimit() }

// ByNewest returns the Jobs of op, newest first.
func (s Snapshot) ByNewest(op Operation) []FinishedJob {
	var jobs []FinishedJob
	for _, j := range s.History {
		if j.Op == op {
			jobs = append(jobs, j)
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].FinishedAt.After(jobs[b].FinishedAt) })
	return jobs
}

// Newest returns the newest Job of op (nil when none).
func (s Snapshot) Newest(op Operation) *FinishedJob {
	if jobs := s.ByNewest(op); len(jobs) > 0 {
		return &jobs[0]
	}
	return nil
}

// ConsecutiveFailures counts the failures of op since its newest success
// and returns the newest failure's finish.
func (s Snapshot) ConsecutiveFailures(op Operation) (int, time.Time) {
	n, last := 0, time.Time{}
	for _, j := range s.ByNewest(op) {
		if j.Succeeded && !j.CountsAsFailure() {
			break
		}
		if j.CountsAsFailure() {
			if n == 0 {
				last = j.FinishedAt
			}
			n++
		}
	}
	return n, last
}

// newestApplyFailed: the newest apply that ended either way failed.
// Remediations have their own cap; a blocked or plan-changed apply ended
// neither way, so an apply that failed before it is still to retry (and
// waits for the approval of that plan).
func (s Snapshot) newestApplyFailed() bool {
	for _, j := range s.ByNewest(OpApply) {
		if j.Remediation || j.Blocked || j.PlanChanged {
			continue
		}
		return j.CountsAsFailure()
	}
	return false
}

// RemediationFailures counts failed applies finished after the newest
// successful drift check, stopping at an apply success.
func (s Snapshot) RemediationFailures() int {
	n := 0
	for _, j := range s.ByNewest(OpApply) {
		if j.Succeeded || !j.FinishedAt.After(s.Schedule.LastDriftCheck) {
			break
		}
		if j.CountsAsFailure() {
			n++
		}
	}
	return n
}

// Jitter is a deterministic delay of up to 10% of interval, from the UID.
func Jitter(uid string, interval time.Duration) time.Duration {
	if uid == "" || interval <= 0 {
		return 0
	}
	sum := sha256.Sum256([]byte(uid))
	frac := float64(binary.BigEndian.Uint64(sum[:8])) / float64(^uint64(0))
	return time.Duration(frac * 0.1 * float64(interval))
}
