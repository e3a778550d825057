package workspace

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
)

// Live reports on an operation's condition (ApplyJobSucceeded,
// DriftJobSucceeded, RestoreJobSucceeded): a wait before a Job's start
// (startWaits) and a running Job's pod that cannot pull its image. They
// are facts of now, which each pass that finds them reports again; the
// condition's record is what the last Job (or the state) said, and once
// the fact ends the condition says its record again. The manager that
// saw a live report begin remembers the record it covered, per object and
// condition type (Engine.replaced), and the first completed pass that no
// longer reports it says the record again (endLiveReports). Another
// manager (a restart, a new leader) leaves the live report until a Job
// reports.

// liveKey names the condition of one object a live report covers.
type liveKey struct {
	uid      types.UID
	condType string
}

// startWaits are the reasons a Job's operation condition carries while
// the Job waits to start: once it starts, the wait is over.
var startWaits = map[string]bool{
	infrav1.WaitingForRunLeaseReason: true, infrav1.WaitingForClusterOperationReason: true, infrav1.WaitingForMachineOperationsReason: true,
	infrav1.WaitingForJobSlotReason: true, infrav1.IdentityNotAllowedReason: true, infrav1.DurableInputsMissingReason: true,
	infrav1.RuntimeCannotKeepStateReason: true, infrav1.NamespaceTerminatingReason: true,
}

// liveReason: a live report gives reason (a running Job's image pull
// failure and a stopped Job's share ImagePullFailed; the Job's outcome
// forgets the record, bookkeep).
func liveReason(reason string) bool {
	return startWaits[reason] || reason == infrav1.ImagePullFailedReason
}

// firstRecord is what an operation condition that was never set says
// (false: a RestoreJobSucceeded, which only a restore request brings).
func firstRecord(t string) (metav1.Condition, bool) {
	if t == infrav1.ApplyJobSucceededCondition {
		return conditions.NoApplyYet, true
	}
	c := meta.FindStatusCondition(conditions.FirstVisit(false), t)
	if c == nil {
		return metav1.Condition{}, false
	}
	return *c, true
}

// reportLive sets c, a live report, remembering the record it covers
// unless an earlier live report of the same episode already did.
func (p *pass) reportLive(c metav1.Condition) {
	k := liveKey{p.obj.GetUID(), c.Type}
	cur := p.current(c.Type)
	if _, covered := p.e.replaced.Load(k); !covered || cur == nil || !liveReason(cur.Reason) {
		switch rec, ok := firstRecord(c.Type); {
		case cur != nil:
			p.e.replaced.Store(k, metav1.Condition{Type: cur.Type, Status: cur.Status, Reason: cur.Reason, Message: cur.Message})
		case ok:
			p.e.replaced.Store(k, rec)
		}
	}
	p.set(c)
}

// reportRecord sets c, a Job's outcome: the record itself, which no live
// report covers any more.
func (p *pass) reportRecord(c metav1.Condition) {
	p.e.replaced.Delete(liveKey{p.obj.GetUID(), c.Type})
	p.set(c)
}

// endLiveReports says again, after a completed pass (ok), the record of
// each operation condition a live report covered and this pass did not
// report again (the Job started, its image came, it is no longer due). A
// pass that set the condition otherwise ends the episode: the record it
// remembered is stale.
func (p *pass) endLiveReports(st *infrav1.WorkspaceStatus, ok bool) {
	for _, t := range []string{infrav1.ApplyJobSucceededCondition, infrav1.DriftJobSucceededCondition, infrav1.RestoreJobSucceededCondition} {
		k := liveKey{p.obj.GetUID(), t}
		if set := p.reported(t); set != nil {
			if !liveReason(set.Reason) {
				p.e.replaced.Delete(k)
			}
			continue
		}
		if cur := meta.FindStatusCondition(st.Conditions, t); !ok || cur == nil || !liveReason(cur.Reason) {
			continue
		}
		if rec, ok := p.e.replaced.LoadAndDelete(k); ok {
			p.set(rec.(metav1.Condition))
		}
	}
}

// forgetLiveReports drops what the live reports of an object that is
// gone remembered.
func (e *Engine) forgetLiveReports(uid types.UID) {
	for _, t := range []string{infrav1.ApplyJobSucceededCondition, infrav1.DriftJobSucceededCondition, infrav1.RestoreJobSucceededCondition} {
		e.replaced.Delete(liveKey{uid, t})
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
