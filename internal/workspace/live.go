package workspace

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
)

// Live reports are facts of now, not a record: on an operation condition
// (ApplyJobSucceeded, DriftJobSucceeded, RestoreJobSucceeded) a wait
// before a Job's start (startWaits), a Job held by an invalid policy or by
// inputs too large, a running refresh or drift Job (DriftJobRunning), a
// change waiting for its plan's approval (approvalWaits) and a running
// Job's pod that cannot pull its image; on DriftDetected a running
// remediation apply (DriftRemediating, over the finding); on
// StateReadable a state lock another holder keeps (StateLocked). Each
// pass that finds them reports them again; the condition's record is what
// the last Job (or the state) said, and once the fact ends the condition
// says its record again. The manager that saw a live report begin remembers the
// record it covered, per object and condition type (Engine.replaced),
// and the first completed pass that reached its decision without
// reporting it again says the record again (endLiveReports). The records
// go into the manager's checkpoint with the settled objects' (livekeep.go),
// so that a restarted manager, or a new leader, knows them too; one
// that has not loaded them (no checkpoint, a crash before the save) leaves
// the live report until a Job (or, for StateReadable, a read of the
// state) reports.

// liveKey names the condition of one object a live report covers.
type liveKey struct {
	uid      types.UID
	condType string
}

// liveCondTypes are the conditions a live report can cover.
var liveCondTypes = []string{infrav1.ApplyJobSucceededCondition, infrav1.DriftJobSucceededCondition, infrav1.RestoreJobSucceededCondition,
	infrav1.StateReadableCondition, infrav1.DriftDetectedCondition}

// startWaits are the reasons a Job's operation condition carries while
// the Job waits to start: once it starts, the wait is over.
var startWaits = map[string]bool{
	infrav1.WaitingForRunLeaseReason: true, infrav1.WaitingForClusterOperationReason: true, infrav1.WaitingForMachineOperationsReason: true,
	infrav1.WaitingForJobSlotReason: true, infrav1.IdentityNotAllowedReason: true, infrav1.DurableInputsMissingReason: true,
	infrav1.RuntimeCannotKeepStateReason: true, infrav1.NamespaceTerminatingReason: true,
}

// heldReasons hold a due Job for what the object says: each pass that
// decides on the Job reports them again.
var heldReasons = map[string]bool{infrav1.JobPolicyInvalidReason: true, infrav1.InputsTooLargeReason: true}

// approvalWaits say a change waits for its TerraformPlan's approval: the
// outcome of the plan or blocked apply Job that made the plan, said again
// by each pass while the plan waits (approvalAwaited) or the decision
// waits for it. Once approved, the apply that starts ends them: while it
// runs the condition says what it said before the plan.
var approvalWaits = map[string]bool{infrav1.PlanAwaitingApprovalReason: true, infrav1.DestructivePlanBlockedReason: true}

// runningReasons say a Job or a holder is at work now: a refresh or drift
// Job, or a drift remediation's apply, runs (each pass that finds it
// running says so again), another holder keeps the state lock (each pass
// that reads the lock).
var runningReasons = map[string]bool{infrav1.DriftJobRunningReason: true, infrav1.DriftRemediatingReason: true, infrav1.StateLockedReason: true}

// live: c is a live report (a Job stopped for its image is a record).
func live(c metav1.Condition) bool {
	return startWaits[c.Reason] || heldReasons[c.Reason] || runningReasons[c.Reason] || approvalWaits[c.Reason] || conditions.PullFailing(c)
}

// firstRecord is what an operation condition that was never set says: a
// condition of no Status for a RestoreJobSucceeded, which only a restore
// request brings (it goes again).
func firstRecord(t string) metav1.Condition {
	if t == infrav1.ApplyJobSucceededCondition {
		return conditions.NoApplyYet
	}
	if c := meta.FindStatusCondition(conditions.FirstVisit(false), t); c != nil {
		return *c
	}
	return metav1.Condition{Type: t}
}

// reportLive sets c, a live report, remembering the record it covers: the
// condition as it was, unless a live report already covers it (that one
// remembered the record, or another manager did).
func (p *pass) reportLive(c metav1.Condition) {
	k := liveKey{p.obj.GetUID(), c.Type}
	switch cur := p.current(c.Type); {
	case cur == nil:
		if _, covered := p.e.replaced.Load(k); !covered {
			p.e.keepRecord(k, liveRecord{Cond: firstRecord(c.Type), LastJob: p.newestFinishedJob()})
		}
	case !live(*cur):
		p.e.keepRecord(k, liveRecord{Cond: metav1.Condition{Type: cur.Type, Status: cur.Status, Reason: cur.Reason, Message: cur.Message}, LastJob: p.newestFinishedJob()})
	}
	p.set(c)
}

// report sets c, as a live report when it is one.
func (p *pass) report(c metav1.Condition) {
	if live(c) {
		p.reportLive(c)
		return
	}
	p.set(c)
}

// endLiveReports says again the record of each condition (liveCondTypes) a
// live report covered and this pass did not report again, when the pass
// completed (ok) and reached its decision (the Job started, its image
// came, it is no longer due or held): a pass that stopped earlier (paused,
// waiting for its owner) did not look. The record is forgotten once the
// status saying it is written. A pass that set the condition otherwise
// ends the episode, once its status is written: the record it
// remembered is stale.
func (p *pass) endLiveReports(st *infrav1.WorkspaceStatus, ok bool) {
	for _, t := range liveCondTypes {
		k := liveKey{p.obj.GetUID(), t}
		rec, found := p.e.replaced.Load(k)
		if found && rec.(liveRecord).Loaded {
			rec, found = p.e.claimLoaded(k, rec.(liveRecord), p.newestFinishedJob())
		}
		if set := p.reported(t); set != nil {
			if !live(*set) && found {
				p.forgetOnceWritten(k, rec)
			}
			continue
		}
		if cur := meta.FindStatusCondition(st.Conditions, t); !ok || p.decided == nil || cur == nil || !live(*cur) || !found {
			continue
		}
		if c := rec.(liveRecord).Cond; c.Status == "" {
			p.dropped = append(p.dropped, t)
		} else {
			p.set(c)
		}
		p.forgetOnceWritten(k, rec)
	}
}

// forgetOnceWritten forgets the record rec of k once the status the pass
// computed is written: a pass whose status write fails leaves the live
// report on the object, and so the record with it.
func (p *pass) forgetOnceWritten(k liveKey, rec any) {
	p.observe(func() {
		if p.e.replaced.CompareAndDelete(k, rec) {
			p.e.liveChanged.Store(true)
		}
	})
}

// forgetLiveReports drops what the live reports of an object that is
// gone remembered.
func (e *Engine) forgetLiveReports(uid types.UID) {
	for _, t := range liveCondTypes {
		e.forgetRecord(liveKey{uid, t})
	}
}

// reported is the condition of type t this pass set, nil when none.
func (p *pass) reported(t string) *metav1.Condition {
	for i := range p.conds {
		if p.conds[i].Type == t {
			return &p.conds[i]
		}
	}
	return nil
}
