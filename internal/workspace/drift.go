package workspace

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
)

// Drift. A drift Job refreshes and plans without refreshing again; any
// create, update, replace or delete it finds is drift, reported on
// DriftDetected (conditions.DriftChecked and the rules beside it).

// current is a condition as this pass leaves it: set this pass, else
// none when the pass drops it, else as read.
func (p *pass) current(condType string) *metav1.Condition {
	if c := p.reported(condType); c != nil {
		return c
	}
	if slices.Contains(p.dropped, condType) {
		return nil // it goes with this pass
	}
	return meta.FindStatusCondition(p.w.Status.Conditions, condType)
}

// remediates: drift findings of this object re-apply its inputs.
func (p *pass) remediates() bool {
	return p.eff.DriftAction == infrav1.DriftActionRemediate && p.role.Mutable()
}

// driftFound: the newest drift finding stands.
func (p *pass) driftFound() bool {
	c := p.current(infrav1.DriftDetectedCondition)
	return c != nil && c.Status == metav1.ConditionTrue
}

// recordDrift sets DriftDetected from a succeeded drift Job's result.
func (p *pass) recordDrift(o jobs.Outcome) {
	if o.Result == nil || o.Result.Drift == nil {
		return
	}
	d := o.Result.Drift
	p.set(conditions.DriftChecked(conditions.DriftFinding{Job: o.Job.Name, Detected: d.Detected, Create: d.Create, Update: d.Update, Replace: d.Replace, Delete: d.Delete,
		Resources: d.Resources, Truncated: d.Truncated, Remediates: p.remediates()}))
}

// driftAfterApply updates a standing finding after an apply Job.
func (p *pass) driftAfterApply(o jobs.Outcome) {
	if !p.driftFound() {
		return
	}
	a := conditions.ApplyAfterDrift{Job: o.Job.Name, Succeeded: o.Succeeded, Remediation: o.Job.Annotations[infrav1.DriftRemediationAnnotation] == "true",
		Blocked: o.Job.Annotations[infrav1.DestructivePlanBlockedAnnotation] == "true", Limit: max(int(p.eff.Policy.FailedJobsHistoryLimit), 1)}
	if a.Remediation && !a.Succeeded {
		a.Failures = p.remediationHistory().RemediationFailures()
	}
	if c, ok := conditions.DriftAfterApply(a); ok {
		p.set(c)
	}
}

// remediationHistory is what the decision table counts remediations
// from: the Job history, the newest drift check and the failed limit.
func (p *pass) remediationHistory() decide.Snapshot {
	s := decide.Snapshot{History: p.history(), FailedJobsHistoryLimit: int(p.eff.Policy.FailedJobsHistoryLimit)}
	if t := p.w.Status.LastDriftCheck; t != nil {
		s.Schedule.LastDriftCheck = t.Time
	}
	return s
}

// driftFollowsAction tells a standing finding again for the drift action
// the object has now (conditions.DriftFollowsAction); a deleting object
// never remediates, so its finding stays as it was.
func (p *pass) driftFollowsAction(deleting bool) {
	c := p.current(infrav1.DriftDetectedCondition)
	if c == nil || deleting {
		return
	}
	if next, ok := conditions.DriftFollowsAction(*c, p.remediates(), p.remediationHistory().RemediationCapped()); ok {
		p.set(next)
	}
}

// remediationBackingOff says on DriftDetected that the remediation is due
// but waits out the backoff of earlier failed applies.
func (p *pass) remediationBackingOff(after time.Duration) {
	if c := p.current(infrav1.DriftDetectedCondition); c != nil && c.Status == metav1.ConditionTrue {
		p.set(conditions.DriftBackingOff(*c, p.now.Add(after)))
	}
}

// remediationStarted marks the apply Job of a drift remediation (a live
// report: sayRunning says it again while the Job runs).
func (p *pass) remediationStarted(name string) {
	p.report(conditions.DriftRemediating(name))
	p.eventf(corev1.EventTypeNormal, "DriftRemediationStarted", "Job %s re-applies the current inputs to remove the drift found by the last drift check", name)
}
