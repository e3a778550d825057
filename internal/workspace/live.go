package workspace

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/livereport"
)

// Live reports (livereport.Live says which) are facts of now, not a
// record: on an operation condition (ApplyJobSucceeded,
// DriftJobSucceeded, RestoreJobSucceeded) a wait before a Job's start, a
// Job held by an invalid policy or by inputs too large, a running refresh
// or drift Job (DriftJobRunning), a change waiting for its plan's
// approval and a running Job's pod that cannot pull its image; on
// DriftDetected a running remediation apply (DriftRemediating, over the
// finding); on
// StateReadable a state lock another holder keeps (StateLocked). Each
// pass that finds them reports them again; the condition's record is what
// the last Job (or the state) said, and once the fact ends the condition
// says its record again. The manager that saw a live report begin remembers the
// record it covered, per object and condition type (Engine.live,
// internal/livereport),
// and the first completed pass that reached its decision without
// reporting it again says the record again (endLiveReports). The records
// go into the manager's checkpoint with the settled objects'
// (internal/settled), so that a restarted manager, or a new leader, knows them too; one
// that has not loaded them (no checkpoint, a crash before the save) leaves
// the live report until a Job (or, for StateReadable, a read of the
// state) reports.

// reportLive sets c, a live report, remembering the record it covers
// (livereport.Covers).
func (p *pass) reportLive(c metav1.Condition) {
	k := livereport.Key{UID: p.obj.GetUID(), Type: c.Type}
	_, covered := p.e.live.Get(k)
	if rec, keep := livereport.Covers(c.Type, p.current(c.Type), covered, jobs.NewestFinished(p.jobs)); keep {
		p.e.live.Keep(k, rec)
	}
	p.set(c)
}

// report sets c, as a live report when it is one.
func (p *pass) report(c metav1.Condition) {
	if livereport.Live(c) {
		p.reportLive(c)
		return
	}
	p.set(c)
}

// endLiveReports says again the record of each condition (livereport.Types) a
// live report covered and this pass did not report again, when the pass
// completed (ok) and reached its decision (the Job started, its image
// came, it is no longer due or held): a pass that stopped earlier (paused,
// waiting for its owner) did not look. The record is forgotten once the
// status saying it is written. A pass that set the condition otherwise
// ends the episode, once its status is written: the record it
// remembered is stale.
func (p *pass) endLiveReports(st *infrav1.WorkspaceStatus, ok bool) {
	for _, t := range livereport.Types {
		k := livereport.Key{UID: p.obj.GetUID(), Type: t}
		rec, found := p.e.live.Get(k)
		if found && rec.Loaded {
			rec, found = p.e.live.Claim(k, rec, jobs.NewestFinished(p.jobs))
		}
		end := livereport.Close(livereport.Ending{Said: p.reported(t), Stored: meta.FindStatusCondition(st.Conditions, t), Rec: rec, Found: found,
			Reached: ok && p.decided != nil})
		if end.Say != nil {
			p.set(*end.Say)
		}
		if end.Drop {
			p.dropped = append(p.dropped, t)
		}
		if end.Forget {
			p.forgetOnceWritten(k, rec)
		}
	}
}

// forgetOnceWritten forgets the record rec of k once the status the pass
// computed is written: a pass whose status write fails leaves the live
// report on the object, and so the record with it.
func (p *pass) forgetOnceWritten(k livereport.Key, rec livereport.Record) {
	p.observe(func() { p.e.live.ForgetIf(k, rec) })
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
