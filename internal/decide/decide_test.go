package decide

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// base is a provisioned, up-to-date mutable object: nothing is due.
func base() Snapshot {
	return Snapshot{
		Now: t0, Mutable: true, State: StateReadable, StateInputsHash: "h2:a", InputsHash: "h2:a", EverApplied: true,
		FailedJobsHistoryLimit: 3,
		History:                []FinishedJob{{Op: OpApply, Succeeded: true, FinishedAt: t0.Add(-time.Hour), InputsHash: "h2:a"}},
		Schedule:               Schedule{CreatedAt: t0.Add(-2 * time.Hour), LastSuccessfulApply: t0.Add(-time.Hour)},
	}
}

func failed(op Operation, ago time.Duration) FinishedJob {
	return FinishedJob{Op: op, FinishedAt: t0.Add(-ago), InputsHash: "h2:b"}
}

// held is an admission wait holding back a Job of op.
func held(op Operation, r Reason, after time.Duration) Decision {
	return Decision{Action: ActionWait, Op: op, Reason: r, Requeue: after}
}

func TestDecide(t *testing.T) {
	testCases := []struct {
		name   string
		change func(*Snapshot)
		want   Decision
	}{
		// The decision table.
		{"0 a Job runs", func(s *Snapshot) { s.JobActive = true }, wait(ReasonJobActive, time.Minute)},
		{"0 a Job runs while deleting", func(s *Snapshot) { s.JobActive, s.Deleting = true, true }, wait(ReasonJobActive, time.Minute)},
		{"1 restore requested", func(s *Snapshot) { s.RestoreRequested, s.InputsHash = true, "h2:b" }, start(OpRestore, ReasonRestoreRequested)},
		{"1 restore of a held deletion", func(s *Snapshot) {
			s.Deleting, s.RestoreRequested, s.State = true, true, StateAbsent
		}, start(OpRestore, ReasonRestoreRequested)},
		{"1 restore ignored on a readable deleting object", func(s *Snapshot) { s.Deleting, s.RestoreRequested = true, true },
			start(OpDestroy, ReasonDeleting)},
		{"2 deleting, state lost", func(s *Snapshot) { s.Deleting, s.State = true, StateAbsent }, wait(ReasonDeletionHeld, time.Minute)},
		{"2 deleting, state unreadable", func(s *Snapshot) { s.Deleting, s.State = true, StateUnreadable }, wait(ReasonDeletionHeld, time.Minute)},
		{"3 deleting, never applied", func(s *Snapshot) { s.Deleting, s.State, s.EverApplied = true, StateAbsent, false },
			Decision{Action: ActionRelease, Reason: ReasonDeletingWithoutState}},
		{"4 deleting", func(s *Snapshot) { s.Deleting = true }, start(OpDestroy, ReasonDeleting)},
		// Admission rows: a due Job that cannot start yet.
		{"an owner that does not reference the object back starts nothing, a running Job or not", func(s *Snapshot) {
			s.OwnerMismatch, s.JobActive, s.InputsHash = true, true, "h2:b"
		}, wait(ReasonOwnerMismatch, 30*time.Second)},
		{"a deleting object whose owner does not reference it back still destroys", func(s *Snapshot) { s.Deleting, s.OwnerMismatch = true, true },
			start(OpDestroy, ReasonDeleting)},
		{"deleting with no deletionPolicy to inherit is neither destroyed nor retained", func(s *Snapshot) {
			s.Deleting, s.DeletionPolicyUnresolved, s.JobActive = true, true, true
		}, wait(ReasonDeletionPolicyUnresolved, 30*time.Second)},
		{"a due apply waits while its inputs cannot be built", func(s *Snapshot) { s.State, s.EverApplied, s.InputsHash = StateAbsent, false, "" },
			held(OpApply, ReasonInputsUnavailable, 30*time.Second)},
		{"a due apply waits while its inputs exceed the cap", func(s *Snapshot) {
			s.State, s.EverApplied, s.InputsHash, s.InputsTooLarge = StateAbsent, false, "", true
		}, held(OpApply, ReasonInputsTooLarge, 10*time.Minute)},
		{"a due plan waits for its inputs too", func(s *Snapshot) { s.Manual, s.UnconfirmedApply, s.InputsHash = true, true, "" },
			held(OpPlan, ReasonInputsUnavailable, 30*time.Second)},
		{"an invalid jobs policy holds an apply", func(s *Snapshot) { s.InputsHash, s.PolicyInvalid = "h2:b", true },
			held(OpApply, ReasonJobPolicyInvalid, 10*time.Minute)},
		{"an invalid jobs policy holds a refresh", func(s *Snapshot) {
			s.PolicyInvalid, s.Schedule.DriftInterval = true, time.Minute
		}, held(OpDrift, ReasonJobPolicyInvalid, 10*time.Minute)},
		{"an invalid jobs policy does not hold a destroy", func(s *Snapshot) { s.Deleting, s.PolicyInvalid = true, true },
			start(OpDestroy, ReasonDeleting)},
		{"the policy comes before the inputs", func(s *Snapshot) {
			s.State, s.EverApplied, s.InputsHash, s.PolicyInvalid = StateAbsent, false, "", true
		},
			held(OpApply, ReasonJobPolicyInvalid, 10*time.Minute)},
		{"a namespace being deleted takes no destroy Job", func(s *Snapshot) { s.Deleting, s.NamespaceTerminating = true, true },
			held(OpDestroy, ReasonNamespaceTerminating, 30*time.Second)},
		{"a namespace being deleted sends the destroy to the evacuation namespace", func(s *Snapshot) {
			s.Deleting, s.NamespaceTerminating, s.Evacuation = true, true, true
		}, Decision{Action: ActionStartJob, Op: OpDestroy, Reason: ReasonDeleting, Evacuate: true}},
		{"an evacuated destroy still keeps an insecure policy out", func(s *Snapshot) {
			s.Deleting, s.NamespaceTerminating, s.Evacuation, s.SecurityInvalid = true, true, true, true
		}, held(OpDestroy, ReasonJobPolicyInvalid, 10*time.Minute)},
		{"a destroy in a live namespace stays there", func(s *Snapshot) { s.Deleting, s.Evacuation = true, true },
			start(OpDestroy, ReasonDeleting)},
		{"a namespace being deleted comes before an insecure policy", func(s *Snapshot) {
			s.Deleting, s.NamespaceTerminating, s.SecurityInvalid = true, true, true
		}, held(OpDestroy, ReasonNamespaceTerminating, 30*time.Second)},
		{"an insecure policy holds even a destroy", func(s *Snapshot) { s.Deleting, s.SecurityInvalid = true, true },
			held(OpDestroy, ReasonJobPolicyInvalid, 10*time.Minute)},
		{"an insecure policy holds nothing that does not start", func(s *Snapshot) { s.SecurityInvalid = true },
			wait(ReasonUpToDate, 0)},
		{"credentials not ready hold an apply", func(s *Snapshot) { s.InputsHash, s.CredentialsNotReady = "h2:b", true },
			held(OpApply, ReasonCredentialsNotReady, 30*time.Second)},
		{"credentials not ready hold a drift check rendering a record of the same identity", func(s *Snapshot) {
			s.CredentialsNotReady, s.Schedule.DriftInterval = true, time.Minute
		}, held(OpDrift, ReasonCredentialsNotReady, 30*time.Second)},
		{"a drift check rendering a record of another identity checks that one as it starts", func(s *Snapshot) {
			s.CredentialsNotReady, s.RecordedIdentity, s.Schedule.DriftInterval = true, true, time.Minute
		}, start(OpDrift, ReasonDriftDue)},
		{"credentials not ready hold nothing that does not start", func(s *Snapshot) { s.CredentialsNotReady = true },
			wait(ReasonUpToDate, 0)},
		{"an insecure policy comes before the credentials", func(s *Snapshot) {
			s.InputsHash, s.CredentialsNotReady, s.SecurityInvalid = "h2:b", true, true
		}, held(OpApply, ReasonJobPolicyInvalid, 10*time.Minute)},
		{"a destroy without durable inputs waits for them", func(s *Snapshot) { s.Deleting, s.DurableInputsMissing = true, true },
			held(OpDestroy, ReasonDurableInputsMissing, 10*time.Minute)},
		{"a drift check without durable inputs waits for them", func(s *Snapshot) {
			s.DurableInputsMissing, s.Schedule.DriftInterval = true, time.Minute
		}, held(OpDrift, ReasonDurableInputsMissing, 10*time.Minute)},
		{"the credentials come before missing durable inputs", func(s *Snapshot) {
			s.DurableInputsMissing, s.RecordedIdentity, s.CredentialsNotReady, s.Schedule.DriftInterval = true, true, true, time.Minute
		}, held(OpDrift, ReasonCredentialsNotReady, 30*time.Second)},
		{"a destroy without durable inputs is not sent to the evacuation namespace", func(s *Snapshot) {
			s.Deleting, s.NamespaceTerminating, s.Evacuation, s.DurableInputsMissing = true, true, true, true
		}, held(OpDestroy, ReasonDurableInputsMissing, 10*time.Minute)},
		{"an apply needs no durable inputs", func(s *Snapshot) { s.InputsHash, s.DurableInputsMissing = "h2:b", true },
			start(OpApply, ReasonInputsChanged)},
		{"a restore needs no durable inputs", func(s *Snapshot) { s.RestoreRequested, s.DurableInputsMissing = true, true },
			start(OpRestore, ReasonRestoreRequested)},
		{"an apply backing off keeps its backoff whatever its inputs", func(s *Snapshot) {
			s.State, s.EverApplied, s.InputsHash = StateAbsent, false, ""
			s.History = []FinishedJob{failed(OpApply, 30*time.Second)}
		}, wait(Backoff(ReasonNoState), 30*time.Second)},
		{"a restore needs no current inputs", func(s *Snapshot) { s.RestoreRequested, s.InputsHash = true, "" },
			start(OpRestore, ReasonRestoreRequested)},
		{"4 destroyed: release after cleanup", func(s *Snapshot) {
			s.Deleting = true
			s.History = append(s.History, FinishedJob{Op: OpDestroy, Succeeded: true, FinishedAt: t0.Add(-time.Second)})
		}, Decision{Action: ActionRelease, Reason: ReasonDestroyed}},
		{"4 destroyed, its Job gone before the cleanup ended: the status says so", func(s *Snapshot) {
			s.Deleting, s.State, s.DestroyReportedAt = true, StateAbsent, t0.Add(-time.Minute)
		}, Decision{Action: ActionRelease, Reason: ReasonDestroyed}},
		{"4 the same with an earlier failed destroy Job left", func(s *Snapshot) {
			s.Deleting, s.State, s.DestroyReportedAt = true, StateUnreadable, t0.Add(-time.Minute)
			s.History = append(s.History, failed(OpDestroy, time.Hour))
		}, Decision{Action: ActionRelease, Reason: ReasonDestroyed}},
		{"4 a destroy Job that failed after the report outweighs it", func(s *Snapshot) {
			s.Deleting, s.State, s.DestroyReportedAt = true, StateAbsent, t0.Add(-2*time.Hour)
			s.History = append(s.History, failed(OpDestroy, time.Hour))
		}, wait(ReasonDeletionHeld, time.Minute)},
		{"4 a retained state is not this object's cleanup begun", func(s *Snapshot) {
			s.Deleting, s.State, s.DestroyReportedAt = true, StateRetained, t0.Add(-time.Minute)
		}, Decision{Action: ActionRelease, Reason: ReasonHoldsRetainedState}},
		{"4 a state still read whole is destroyed again, not released on the report's word", func(s *Snapshot) {
			s.Deleting, s.DestroyReportedAt = true, t0.Add(-time.Minute)
		}, start(OpDestroy, ReasonDeleting)},
		{"4 an apply after the destroy destroys again", func(s *Snapshot) {
			s.Deleting = true
			s.History = append(s.History, FinishedJob{Op: OpDestroy, Succeeded: true, FinishedAt: t0.Add(-time.Hour)})
		}, start(OpDestroy, ReasonDeleting)},
		{"deleting waits for dependents first", func(s *Snapshot) { s.Deleting, s.Dependents, s.Retain = true, 2, true },
			wait(ReasonDependentsExist, 30*time.Second)},
		{"deleting with Retain, even with a held state", func(s *Snapshot) { s.Deleting, s.Retain, s.State = true, true, StateUnreadable },
			Decision{Action: ActionRetain, Reason: ReasonRetain}},
		{"deleting on another object's retained state", func(s *Snapshot) { s.Deleting, s.State = true, StateRetained },
			Decision{Action: ActionRelease, Reason: ReasonHoldsRetainedState}},
		{"destroy backs off after a failure", func(s *Snapshot) {
			s.Deleting = true
			s.History = append(s.History, failed(OpDestroy, 30*time.Second))
		}, wait(Backoff(ReasonDeleting), 30*time.Second)},
		{"a shorter retry base is the first backoff", func(s *Snapshot) {
			s.Deleting, s.Timing.RetryBase = true, 40*time.Second
			s.History = append(s.History, failed(OpDestroy, 30*time.Second))
		}, wait(Backoff(ReasonDeleting), 10*time.Second)},
		{"a shorter retry base doubles", func(s *Snapshot) {
			s.Deleting, s.Timing.RetryBase = true, 10*time.Second
			s.History = append(s.History, failed(OpDestroy, 50*time.Second), failed(OpDestroy, 5*time.Second))
		}, wait(Backoff(ReasonDeleting), 15*time.Second)},
		{"a shorter gate requeue is the dependents' wait", func(s *Snapshot) {
			s.Deleting, s.Dependents, s.Timing.Gate = true, 1, 3*time.Second
		}, wait(ReasonDependentsExist, 3*time.Second)},
		{"a shorter state requeue is a held state's wait", func(s *Snapshot) { s.State, s.Timing.State = StateRetained, 4*time.Second },
			wait(ReasonRetainedStateFound, 4*time.Second)},
		{"a shorter active-Job requeue is a running Job's wait", func(s *Snapshot) { s.JobActive, s.Timing.ActiveJob = true, 5*time.Second },
			wait(ReasonJobActive, 5*time.Second)},
		{"a shorter policy requeue is an invalid policy's hold", func(s *Snapshot) {
			s.InputsHash, s.PolicyInvalid, s.Timing.Policy = "h2:b", true, 6*time.Second
		}, held(OpApply, ReasonJobPolicyInvalid, 6*time.Second)},
		{"a shorter approval requeue is a pending plan's wait", func(s *Snapshot) {
			s.Manual, s.Plan, s.InputsHash, s.Timing.Approval = true, PlanPending, "h2:b", 7*time.Second
		}, wait(ReasonPlanAwaitingApproval, 7*time.Second)},
		{"destroy retries forever at 10 minutes", func(s *Snapshot) {
			s.Deleting = true
			for i := range 5 {
				s.History = append(s.History, failed(OpDestroy, time.Duration(20+i)*time.Minute))
			}
		}, start(OpDestroy, ReasonDeleting)},
		{"retained state found", func(s *Snapshot) { s.State = StateRetained }, wait(ReasonRetainedStateFound, time.Minute)},
		{"unreadable state starts nothing", func(s *Snapshot) { s.State, s.InputsHash = StateUnreadable, "h2:b" }, wait(ReasonStateUnreadable, time.Minute)},
		{"state lost after applying starts nothing", func(s *Snapshot) { s.State = StateAbsent }, wait(ReasonStateLost, time.Minute)},
		{"apply outcome unknown without a state holds", func(s *Snapshot) {
			s.State, s.EverApplied, s.UnconfirmedApply, s.History = StateAbsent, false, true, nil
		}, wait(ReasonApplyOutcomeUnknown, time.Minute)},
		{"state lost wins over an unknown apply outcome", func(s *Snapshot) { s.State, s.UnconfirmedApply = StateAbsent, true },
			wait(ReasonStateLost, time.Minute)},
		{"deleting with an unknown apply outcome and no state holds", func(s *Snapshot) {
			s.Deleting, s.State, s.EverApplied, s.UnconfirmedApply = true, StateAbsent, false, true
		}, wait(ReasonDeletionHeld, time.Minute)},
		{"deleting with an unknown apply outcome and a state destroys", func(s *Snapshot) { s.Deleting, s.UnconfirmedApply = true, true },
			start(OpDestroy, ReasonDeleting)},
		{"an unknown apply outcome keeps an apply due with equal hashes", func(s *Snapshot) { s.UnconfirmedApply = true },
			start(OpApply, ReasonUnconfirmedApply)},
		{"an unknown apply outcome re-applies a machine", func(s *Snapshot) { s.Mutable, s.UnconfirmedApply = false, true },
			start(OpApply, ReasonUnconfirmedApply)},
		{"an unknown apply outcome backs off after a failure", func(s *Snapshot) {
			s.UnconfirmedApply = true
			s.History = append(s.History, failed(OpApply, 30*time.Second))
		}, wait(Backoff(ReasonUnconfirmedApply), 30*time.Second)},
		{"an approved plan of the blocked inputs lets their apply run", func(s *Snapshot) {
			j := failed(OpApply, time.Minute)
			j.Blocked, j.InputsHash = true, "h2:b"
			s.InputsHash, s.ApprovedPlan, s.History = "h2:b", true, append(s.History, j)
		}, start(OpApply, ReasonInputsChanged)},
		{"a rescued state holds applies until it is restored", func(s *Snapshot) {
			j := failed(OpApply, 30*time.Minute)
			j.Rescued = true
			s.StateInputsHash, s.History = "", append(s.History, j)
		}, wait(ReasonStateRescued, time.Minute)},
		{"a rescued state holds the destroy", func(s *Snapshot) {
			j := failed(OpApply, 30*time.Minute)
			j.Rescued = true
			s.Deleting, s.History = true, append(s.History, j)
		}, wait(ReasonDeletionHeld, time.Minute)},
		{"a restore of the rescued state lifts the hold", func(s *Snapshot) {
			j := failed(OpApply, 30*time.Minute)
			j.Rescued = true
			s.StateInputsHash = ""
			s.History = append(s.History, j, FinishedJob{Op: OpRestore, Succeeded: true, FinishedAt: t0.Add(-time.Minute)})
		}, start(OpApply, ReasonStateWithoutInputsHash)},
		{"a rescue recorded on the attempt record holds without its Job", func(s *Snapshot) {
			s.StateInputsHash, s.RescueRecorded = "", true
		}, wait(ReasonStateRescued, time.Minute)},
		{"a restore request wins over the rescue hold", func(s *Snapshot) {
			j := failed(OpApply, 30*time.Minute)
			j.Rescued = true
			s.RestoreRequested, s.History = true, append(s.History, j)
		}, start(OpRestore, ReasonRestoreRequested)},
		{"Manual: changed inputs are planned first", func(s *Snapshot) { s.Manual, s.InputsHash = true, "h2:b" }, start(OpPlan, ReasonInputsChanged)},
		{"Manual: a pending plan waits for approval", func(s *Snapshot) { s.Manual, s.InputsHash, s.Plan = true, "h2:b", PlanPending },
			wait(ReasonPlanAwaitingApproval, 10*time.Minute)},
		{"Manual: an approved plan applies", func(s *Snapshot) { s.Manual, s.InputsHash, s.Plan = true, "h2:b", PlanApproved },
			start(OpApply, ReasonInputsChanged)},
		{"Manual: an empty plan applies without approval", func(s *Snapshot) { s.Manual, s.InputsHash, s.Plan = true, "h2:b", PlanEmpty },
			start(OpApply, ReasonInputsChanged)},
		{"Manual: the first apply is not planned", func(s *Snapshot) { s.Manual, s.State, s.EverApplied, s.History = true, StateAbsent, false, nil },
			start(OpApply, ReasonNoState)},
		{"Manual: a failed plan backs off", func(s *Snapshot) {
			s.Manual, s.InputsHash = true, "h2:b"
			s.History = append(s.History, failed(OpPlan, 30*time.Second))
		}, wait(Backoff(ReasonInputsChanged), 30*time.Second)},
		{"Manual: a plan Job that succeeded without a readable plan backs off, never plans in a loop", func(s *Snapshot) {
			s.Manual, s.InputsHash = true, "h2:b"
			j := failed(OpPlan, 30*time.Second)
			j.Succeeded, j.PlanUnreadable = true, true
			s.History = append(s.History, j)
		}, wait(Backoff(ReasonInputsChanged), 30*time.Second)},
		{"a blocked remediation is not retried until its plan is approved", func(s *Snapshot) {
			j := failed(OpApply, time.Minute)
			j.Blocked, j.Remediation, j.InputsHash = true, true, "h2:a"
			s.DriftFound, s.Remediate, s.History = true, true, append(s.History, j)
			s.Schedule.LastDriftCheck = t0.Add(-10 * time.Minute)
		}, wait(ReasonUpToDate, 0)},
		{"an approved plan lets the blocked remediation through", func(s *Snapshot) {
			j := failed(OpApply, time.Minute)
			j.Blocked, j.Remediation, j.InputsHash = true, true, "h2:a"
			s.DriftFound, s.Remediate, s.ApprovedPlan, s.History = true, true, true, append(s.History, j)
			s.Schedule.LastDriftCheck = t0.Add(-10 * time.Minute)
		}, start(OpApply, ReasonDriftRemediation)},
		{"5 no state", func(s *Snapshot) { s.State, s.EverApplied, s.History = StateAbsent, false, nil }, start(OpApply, ReasonNoState)},
		{"6 state without inputs hash", func(s *Snapshot) { s.StateInputsHash = "" }, start(OpApply, ReasonStateWithoutInputsHash)},
		{"7 inputs changed", func(s *Snapshot) { s.InputsHash = "h2:b" }, start(OpApply, ReasonInputsChanged)},
		{"7 a machine never re-applies", func(s *Snapshot) { s.Mutable, s.InputsHash = false, "h2:b" }, wait(ReasonUpToDate, 0)},
		{"7 inputs that cannot be built apply nothing", func(s *Snapshot) { s.InputsHash = "" }, wait(ReasonUpToDate, 0)},
		{"8 last apply failed", func(s *Snapshot) { s.History = append(s.History, failed(OpApply, 30*time.Minute)) },
			start(OpApply, ReasonLastApplyFailed)},
		{"8 a blocked apply is no failure", func(s *Snapshot) {
			j := failed(OpApply, time.Minute)
			j.Blocked, j.InputsHash = true, "h2:a"
			s.History = append(s.History, j)
		}, wait(ReasonUpToDate, 0)},
		{"8 an apply blocked after a failed one waits for the approval", func(s *Snapshot) {
			f := failed(OpApply, 30*time.Minute)
			f.InputsHash = "h2:a"
			j := failed(OpApply, time.Minute)
			j.Blocked, j.InputsHash, j.PlanHash = true, "h2:a", "p2:x"
			s.History = append(s.History, f, j)
		}, wait(ReasonAwaitingApproval, 10*time.Minute)},
		{"8 the approval of a plan blocked after a failure applies it", func(s *Snapshot) {
			f := failed(OpApply, 30*time.Minute)
			f.InputsHash = "h2:a"
			j := failed(OpApply, time.Minute)
			j.Blocked, j.InputsHash = true, "h2:a"
			s.ApprovedPlan, s.History = true, append(s.History, f, j)
		}, start(OpApply, ReasonLastApplyFailed)},
		{"8 a machine's failed apply is not retried by this rule", func(s *Snapshot) {
			s.Mutable = false
			s.History = append(s.History, failed(OpApply, 30*time.Minute))
		}, wait(ReasonUpToDate, 0)},
		{"9 drift remediation", func(s *Snapshot) {
			s.DriftFound, s.Remediate = true, true
			s.Schedule.LastDriftCheck = t0.Add(-10 * time.Minute)
		}, start(OpApply, ReasonDriftRemediation)},
		{"9 drift reported only", func(s *Snapshot) { s.DriftFound = true }, wait(ReasonUpToDate, 0)},
		{"9 remediation stops at the cap", func(s *Snapshot) {
			s.DriftFound, s.Remediate = true, true
			s.Schedule.LastDriftCheck = t0.Add(-time.Hour)
			for i := range 3 {
				j := failed(OpApply, time.Duration(20+i)*time.Minute)
				j.Remediation = true
				s.History = append(s.History, j)
			}
		}, wait(ReasonUpToDate, 0)},
		// Post-transformations of an apply.
		{"an apply blocked for these inputs waits for approval", func(s *Snapshot) {
			s.InputsHash = "h2:b"
			j := failed(OpApply, time.Minute)
			j.Blocked, j.PlanHash = true, "p2:x"
			s.History = append(s.History, j)
		}, wait(ReasonAwaitingApproval, 10*time.Minute)},
		{"a blocked apply whose plan ended (superseded, failed) is guarded again at once", func(s *Snapshot) {
			s.InputsHash = "h2:b"
			j := failed(OpApply, time.Minute)
			j.Blocked, j.PlanHash, j.PlanEnded = true, "p2:x", true
			s.History = append(s.History, j)
		}, start(OpApply, ReasonInputsChanged)},
		{"a blocked remediation whose plan ended remediates again", func(s *Snapshot) {
			j := failed(OpApply, time.Minute)
			j.Blocked, j.Remediation, j.InputsHash, j.PlanHash, j.PlanEnded = true, true, "h2:a", "p2:x", true
			s.DriftFound, s.Remediate, s.History = true, true, append(s.History, j)
			s.Schedule.LastDriftCheck = t0.Add(-10 * time.Minute)
		}, start(OpApply, ReasonDriftRemediation)},
		{"a blocked apply without a plan to approve is retried after 10 minutes", func(s *Snapshot) {
			s.InputsHash = "h2:b"
			j := failed(OpApply, 11*time.Minute)
			j.Blocked = true
			s.History = append(s.History, j)
		}, start(OpApply, ReasonInputsChanged)},
		{"a blocked apply without a plan waits until then", func(s *Snapshot) {
			s.InputsHash = "h2:b"
			j := failed(OpApply, 4*time.Minute)
			j.Blocked = true
			s.History = append(s.History, j)
		}, wait(ReasonAwaitingApproval, 6*time.Minute)},
		{"a pending plan of these inputs holds their apply without its Job (moved)", func(s *Snapshot) {
			s.InputsHash, s.PendingPlan = "h2:b", true
		}, wait(ReasonAwaitingApproval, 10*time.Minute)},
		{"a pending plan holds a remediation; drift checks go on", func(s *Snapshot) {
			s.DriftFound, s.Remediate, s.PendingPlan = true, true, true
			s.Schedule.LastDriftCheck, s.Schedule.DriftInterval = t0.Add(-10*time.Minute), 5*time.Minute
		}, start(OpDrift, ReasonDriftDue)},
		{"new inputs after a blocked apply apply at once", func(s *Snapshot) {
			s.InputsHash = "h2:c"
			j := failed(OpApply, time.Minute)
			j.Blocked = true
			s.History = append(s.History, j)
		}, start(OpApply, ReasonInputsChanged)},
		{"backoff: 1 minute after the first failure", func(s *Snapshot) {
			s.InputsHash = "h2:b"
			s.History = append(s.History, failed(OpApply, 20*time.Second))
		}, wait(Backoff(ReasonInputsChanged), 40*time.Second)},
		{"backoff: 2 minutes after the second", func(s *Snapshot) {
			s.InputsHash = "h2:b"
			s.History = append(s.History, failed(OpApply, 30*time.Second), failed(OpApply, 5*time.Minute))
		}, wait(Backoff(ReasonInputsChanged), 90*time.Second)},
		{"backoff: 10 minutes once failures reach the history limit", func(s *Snapshot) {
			s.InputsHash = "h2:b"
			s.History = append(s.History, failed(OpApply, time.Minute), failed(OpApply, 5*time.Minute), failed(OpApply, 9*time.Minute))
		}, wait(Backoff(ReasonInputsChanged), 9*time.Minute)},
		{"backoff: limit 1 waits 10 minutes at once", func(s *Snapshot) {
			s.InputsHash, s.FailedJobsHistoryLimit = "h2:b", 0
			s.History = append(s.History, failed(OpApply, time.Minute))
		}, wait(Backoff(ReasonInputsChanged), 9*time.Minute)},
		{"an interrupted apply is retried at once", func(s *Snapshot) {
			s.InputsHash = "h2:b"
			j := failed(OpApply, 10*time.Second)
			j.Interrupted = true
			s.History = append(s.History, j)
		}, start(OpApply, ReasonInputsChanged)},
		// The schedule.
		{"refresh after apply", func(s *Snapshot) { s.Schedule.RefreshAfterApplyDue = true }, start(OpRefresh, ReasonRefreshAfterApply)},
		{"membership converging refreshes every 30 s", func(s *Snapshot) {
			s.Schedule.MembershipConverging, s.Schedule.HealthPending = true, 3
			s.Schedule.LastRefresh = t0.Add(-10 * time.Second)
		}, wait(ReasonUpToDate, 20*time.Second)},
		{"health pending doubles", func(s *Snapshot) {
			s.Schedule.HealthPending = 3 // 30s, 1m, 2m
			s.Schedule.LastRefresh = t0.Add(-3 * time.Minute)
		}, start(OpRefresh, ReasonHealthPending)},
		{"health pending caps at 5 minutes", func(s *Snapshot) {
			s.Schedule.HealthPending = 9
			s.Schedule.LastRefresh = t0.Add(-4 * time.Minute)
		}, wait(ReasonUpToDate, time.Minute)},
		{"membership refresh due", func(s *Snapshot) {
			s.Schedule.MembershipInterval = time.Minute
			s.Schedule.LastRefresh = t0.Add(-2 * time.Minute)
		}, start(OpRefresh, ReasonMembershipRefreshDue)},
		{"health check due", func(s *Snapshot) {
			s.Schedule.HealthCheckInterval = 5 * time.Minute
			s.Schedule.LastRefresh = t0.Add(-6 * time.Minute)
		}, start(OpRefresh, ReasonHealthCheckDue)},
		{"drift due one interval after the apply", func(s *Snapshot) { s.Schedule.DriftInterval = 30 * time.Minute },
			start(OpDrift, ReasonDriftDue)},
		{"drift not due waits for it", func(s *Snapshot) {
			s.Schedule.DriftInterval = 30 * time.Minute
			s.Schedule.LastDriftCheck = t0.Add(-10 * time.Minute)
		}, wait(ReasonUpToDate, 20*time.Minute)},
		{"drift disabled", func(s *Snapshot) { s.Schedule.DriftInterval = 0 }, wait(ReasonUpToDate, 0)},
		{"a failed drift check backs off", func(s *Snapshot) {
			s.Schedule.DriftInterval = 30 * time.Minute
			s.Schedule.LastDriftCheck = t0.Add(-time.Hour)
			s.History = append(s.History, failed(OpDrift, 10*time.Second))
		}, wait(Backoff(ReasonDriftDue), 50*time.Second)},
		{"refresh backoff does not stop a drift check", func(s *Snapshot) {
			s.Schedule.RefreshAfterApplyDue, s.Schedule.DriftInterval = true, 30*time.Minute
			s.History = append(s.History, failed(OpRefresh, 10*time.Second))
		}, start(OpDrift, ReasonDriftDue)},
		{"drift backoff does not stop a refresh", func(s *Snapshot) {
			s.Schedule.RefreshAfterApplyDue = true
			s.History = append(s.History, failed(OpDrift, 10*time.Second))
		}, start(OpRefresh, ReasonRefreshAfterApply)},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.change(&s)
			if got := Decide(s); got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestJitterIsDeterministicAndBounded(t *testing.T) {
	for _, uid := range []string{"a", "5b7e1c3e-1111-2222-3333-444455556666", "x"} {
		j := Jitter(uid, time.Hour)
		if j != Jitter(uid, time.Hour) || j < 0 || j > 6*time.Minute {
			t.Errorf("Jitter(%q) = %v, want the same value, within 10%%", uid, j)
		}
	}
	if Jitter("", time.Hour) != 0 {
		t.Error("no UID, no jitter")
	}
}

// TestNoApplyDue: when a waiting plan is moot because nothing would apply
// it any more.
func TestNoApplyDue(t *testing.T) {
	blockedRemediation := func(s *Snapshot) {
		j := failed(OpApply, time.Minute)
		j.Blocked, j.Remediation, j.InputsHash = true, true, "h2:a"
		s.Remediate, s.History = true, append(s.History, j)
		s.Schedule.LastDriftCheck = t0.Add(-10 * time.Minute)
	}
	testCases := []struct {
		name   string
		change func(*Snapshot)
		want   bool
	}{
		{"up to date", func(*Snapshot) {}, true},
		{"inputs changed", func(s *Snapshot) { s.InputsHash = "h2:b" }, false},
		{"a blocked remediation while the drift stands", func(s *Snapshot) { blockedRemediation(s); s.DriftFound = true }, false},
		{"the drift went away", blockedRemediation, true},
		{"the action changed to Report", func(s *Snapshot) { blockedRemediation(s); s.DriftFound, s.Remediate = true, false }, true},
		{"an apply blocked after a failed one", func(s *Snapshot) {
			f := failed(OpApply, 30*time.Minute)
			f.InputsHash = "h2:a"
			j := failed(OpApply, time.Minute)
			j.Blocked, j.InputsHash = true, "h2:a"
			s.History = append(s.History, f, j)
		}, false},
		{"a Job runs", func(s *Snapshot) { s.JobActive = true }, false},
		{"deleting", func(s *Snapshot) { s.Deleting = true }, false},
		{"a held state", func(s *Snapshot) { s.State = StateUnreadable }, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.change(&s)
			if got := s.NoApplyDue(); got != tc.want {
				t.Errorf("NoApplyDue = %v, want %v", got, tc.want)
			}
		})
	}
}
