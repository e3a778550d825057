package workspace

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// Drift. A drift Job refreshes and plans without refreshing again; any
// create, update, replace or delete it finds is drift, reported on
// DriftDetected (negative polarity, never part of Ready). With the action
// Report that is all; with Remediate (TerraformCluster and pool, never a
// machine) a remediation apply of the current inputs is due, until it
// succeeds or fails as often as the failed history limit allows since the
// finding. Any successful apply after a finding clears it.

// maxDriftResourcesShown bounds the addresses DriftDetected's message lists.
const maxDriftResourcesShown = 5

// current is a condition as this pass leaves it: set this pass, else as
// read.
func (p *pass) current(condType string) *metav1.Condition {
	for i := range p.conds {
		if p.conds[i].Type == condType {
			return &p.conds[i]
		}
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
func (p *pass) recordDrift(o outcome) {
	if o.result == nil || o.result.Drift == nil {
		return
	}
	d := o.result.Drift
	if !d.Detected {
		p.set(metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionFalse, Reason: infrav1.NoDriftReason,
			Message: fmt.Sprintf("Job %s found no drift", o.job.Name)})
		return
	}
	msg := fmt.Sprintf("The last drift check found drift: %d to create, %d to update, %d to replace, %d to delete", d.Create, d.Update, d.Replace, d.Delete)
	if len(d.Resources) > 0 {
		shown := d.Resources[:min(len(d.Resources), maxDriftResourcesShown)]
		msg += " (" + strings.Join(shown, ", ")
		if more := len(d.Resources) - len(shown); more > 0 || d.Truncated {
			msg += ", and more"
		}
		msg += ")"
	}
	c := metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftReportedReason,
		Message: msg + "; drift.action is Report: nothing is changed"}
	if p.remediates() {
		c.Reason, c.Message = infrav1.DriftPendingReason, msg+"; a remediation apply of the current inputs is due"
	}
	p.set(c)
}

// driftAfterApply updates a standing finding after an apply Job: a
// success clears it, a failed remediation leaves it pending.
func (p *pass) driftAfterApply(o outcome) {
	if !p.driftFound() {
		return
	}
	switch {
	case o.succeeded:
		p.set(metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionFalse, Reason: infrav1.NoDriftReason,
			Message: fmt.Sprintf("Job %s applied the current inputs after the drift check", o.job.Name)})
	case o.job.Annotations[infrav1.DriftRemediationAnnotation] == "true" && o.job.Annotations[infrav1.DestructivePlanBlockedAnnotation] == "true":
		p.set(metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftPendingReason,
			Message: fmt.Sprintf("The remediation apply Job %s stopped before deleting or replacing resources; approve its TerraformPlan to remove the drift", o.job.Name)})
	case o.job.Annotations[infrav1.DriftRemediationAnnotation] == "true":
		limit := max(int(p.eff.Policy.FailedJobsHistoryLimit), 1)
		msg := fmt.Sprintf("The remediation apply Job %s did not succeed; it is retried until %d have failed since the drift check", o.job.Name, limit)
		if p.remediationFailures() >= limit {
			msg = fmt.Sprintf("The remediation apply Job %s did not succeed, the %s failed since the drift check: the remediation cap is reached. No remediation runs until a drift check finds the drift again; then the apply backoff applies", o.job.Name, ordinal(limit))
		}
		p.set(metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftPendingReason, Message: msg})
	}
}

// remediationFailures counts the failed applies since the newest
// successful drift check, as the decision table does.
func (p *pass) remediationFailures() int {
	s := decide.Snapshot{History: p.history()}
	if t := p.w.Status.LastDriftCheck; t != nil {
		s.Schedule.LastDriftCheck = t.Time
	}
	return s.RemediationFailures()
}

// ordinal spells 1st, 2nd, 3rd, 4th….
func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// remediationBackingOff says on DriftDetected that the remediation is due
// but waits out the backoff of earlier failed applies.
func (p *pass) remediationBackingOff(after time.Duration) {
	c := p.current(infrav1.DriftDetectedCondition)
	if c == nil || c.Status != metav1.ConditionTrue {
		return
	}
	base, _, _ := strings.Cut(c.Message, "; ")
	p.set(metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftPendingReason,
		Message: fmt.Sprintf("%s; the remediation apply waits out the backoff of the failed applies before it, until %s", base, p.now.Add(after).UTC().Format(time.RFC3339))})
}

// remediationStarted marks the apply Job of a drift remediation.
func (p *pass) remediationStarted(name string) {
	p.set(metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftRemediatingReason,
		Message: fmt.Sprintf("Job %s re-applies the current inputs to remove the drift", name)})
	p.eventf(corev1.EventTypeNormal, "DriftRemediationStarted", "Job %s re-applies the current inputs to remove the drift found by the last drift check", name)
}
