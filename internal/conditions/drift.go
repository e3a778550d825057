package conditions

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// DriftDetected has negative polarity and is never part of Ready. A drift
// Job's finding sets it; with the action Remediate (a TerraformCluster or
// pool, never a machine) a remediation apply of the current inputs is due
// until it succeeds or fails as often as the failed history limit allows
// since the finding. Any successful apply after a finding clears it.

// maxDriftResourcesShown bounds the addresses DriftDetected's message
// lists.
const maxDriftResourcesShown = 5

// DriftFinding is what a succeeded drift Job found.
type DriftFinding struct {
	// Job is the drift Job's name.
	Job      string
	Detected bool
	// Create, Update, Replace and Delete count the drifted resources;
	// Resources lists some of their addresses, Truncated when the runner
	// kept fewer than it found.
	Create, Update, Replace, Delete int
	Resources                       []string
	Truncated                       bool
	// Remediates: the object re-applies its inputs on a finding.
	Remediates bool
}

// DriftChecked is DriftDetected after a drift Job succeeded.
func DriftChecked(f DriftFinding) metav1.Condition {
	if !f.Detected {
		return metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionFalse, Reason: infrav1.NoDriftReason,
			Message: fmt.Sprintf("Job %s found no drift", f.Job)}
	}
	msg := fmt.Sprintf("The last drift check found drift: %d to create, %d to update, %d to replace, %d to delete", f.Create, f.Update, f.Replace, f.Delete)
	if len(f.Resources) > 0 {
		shown := f.Resources[:min(len(f.Resources), maxDriftResourcesShown)]
		msg += " (" + strings.Join(shown, ", ")
		if more := len(f.Resources) - len(shown); more > 0 || f.Truncated {
			msg += ", and more"
		}
		msg += ")"
	}
	return driftFor(msg, f.Remediates)
}

// What a standing finding's message ends with: what its action does
// about it.
const (
	remediationDue  = "; a remediation apply of the current inputs is due"
	reportOnly      = "; drift.action is Report: nothing is changed"
	remediationWait = "; the remediation apply waits out the backoff"
	remediationCap  = "; the remediation cap is reached: no remediation runs until a drift check finds the drift again"
	capReached      = "the remediation cap is reached"
)

// driftFor is a standing finding whose message says what was found
// (finding), told for the action: a remediation is due, or nothing is
// changed.
func driftFor(finding string, remediates bool) metav1.Condition {
	if remediates {
		return metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftPendingReason,
			Message: finding + remediationDue}
	}
	return metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftReportedReason,
		Message: finding + reportOnly}
}

// findingOf is what a standing finding's message says was found, without
// what the action does about it (an address may hold any text: the last
// ending counts).
func findingOf(msg string) string {
	for _, end := range []string{remediationDue, reportOnly, remediationWait, remediationCap} {
		if i := strings.LastIndex(msg, end); i >= 0 {
			return msg[:i]
		}
	}
	finding, _, _ := strings.Cut(msg, "; ")
	return finding
}

// DriftFollowsAction is a standing finding (current) told again for the
// drift action the object has now (remediates): a finding whose
// remediation was due says nothing is changed once the action is Report,
// and a reported one says a remediation is due once it is Remediate, or,
// when capped (as many remediation applies failed since the check as the
// cap allows), that none runs. ok is false when it stays as it is (no
// finding, its action unchanged, or its remediation apply running).
func DriftFollowsAction(current metav1.Condition, remediates, capped bool) (c metav1.Condition, ok bool) {
	if current.Type != infrav1.DriftDetectedCondition || current.Status != metav1.ConditionTrue {
		return c, false
	}
	switch finding := findingOf(current.Message); {
	case current.Reason == infrav1.DriftPendingReason && !remediates:
		return driftFor(finding, false), true
	case current.Reason == infrav1.DriftReportedReason && remediates && capped:
		if !strings.Contains(finding, capReached) {
			finding += remediationCap
		}
		return metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftPendingReason, Message: finding}, true
	case current.Reason == infrav1.DriftReportedReason && remediates:
		return driftFor(finding, true), true
	}
	return c, false
}

// ApplyAfterDrift is an apply Job that ended while a drift finding stood.
type ApplyAfterDrift struct {
	// Job is the apply Job's name.
	Job       string
	Succeeded bool
	// Remediation: the Job was a drift remediation; Blocked: it stopped
	// before a destructive plan.
	Remediation, Blocked bool
	// Limit is the remediation cap (the failed Jobs history limit) and
	// Failures the failed applies since the drift check.
	Limit, Failures int
}

// DriftAfterApply is DriftDetected after an apply Job ended while a
// finding stood: a success clears it, a failed remediation leaves it
// pending; ok is false when the apply does not change it (a failed apply
// that was no remediation).
func DriftAfterApply(a ApplyAfterDrift) (c metav1.Condition, ok bool) {
	pending := func(msg string) (metav1.Condition, bool) {
		return metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftPendingReason, Message: msg}, true
	}
	switch {
	case a.Succeeded:
		return metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionFalse, Reason: infrav1.NoDriftReason,
			Message: fmt.Sprintf("Job %s applied the current inputs after the drift check", a.Job)}, true
	case a.Remediation && a.Blocked:
		return pending(fmt.Sprintf("The remediation apply Job %s stopped before deleting or replacing resources; approve its TerraformPlan to remove the drift", a.Job))
	case a.Remediation && a.Failures >= a.Limit:
		return pending(fmt.Sprintf("The remediation apply Job %s did not succeed, the %s failed since the drift check: the remediation cap is reached. No remediation runs until a drift check finds the drift again; then the apply backoff applies", a.Job, ordinal(a.Limit)))
	case a.Remediation:
		return pending(fmt.Sprintf("The remediation apply Job %s did not succeed; it is retried until %d have failed since the drift check", a.Job, a.Limit))
	}
	return metav1.Condition{}, false
}

// DriftBackingOff is a standing finding (current) whose remediation is
// due but waits out the backoff of earlier failed applies, until.
func DriftBackingOff(current metav1.Condition, until time.Time) metav1.Condition {
	return metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftPendingReason,
		Message: fmt.Sprintf("%s%s of the failed applies before it, until %s", findingOf(current.Message), remediationWait, until.UTC().Format(time.RFC3339))}
}

// DriftRemediating is a finding whose remediation apply Job runs.
func DriftRemediating(job string) metav1.Condition {
	return metav1.Condition{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftRemediatingReason,
		Message: fmt.Sprintf("Job %s re-applies the current inputs to remove the drift", job)}
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
