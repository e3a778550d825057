package conditions

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// negative are the conditions whose True is the bad state.
var negative = map[string]bool{infrav1.DeletingCondition: true, infrav1.DriftDetectedCondition: true, infrav1.DeletionBlockedCondition: true}

// bad reports whether a condition is in a bad state.
func bad(c metav1.Condition) bool {
	if c.Type == infrav1.PausedCondition {
		return false
	}
	if negative[c.Type] {
		return c.Status == metav1.ConditionTrue
	}
	return c.Status == metav1.ConditionFalse
}

// Transitions are the events of the conditions' changes between two
// statuses: one per transition, never per pass. A condition set for the
// first time emits only when it starts bad, so a new object is quiet.
func Transitions(before, after []metav1.Condition) []Event {
	var out []Event
	for _, c := range after {
		old := meta.FindStatusCondition(before, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason && (old.Message == c.Message || !bad(c)) {
			continue
		}
		if old == nil && !bad(c) {
			continue
		}
		if ev, ok := transitionEvent(old, c); ok {
			out = append(out, ev)
		}
	}
	return out
}

// transitionEvent names one change, or nothing for a change that emits
// no event (a bad condition whose message changed, for most types).
func transitionEvent(old *metav1.Condition, c metav1.Condition) (Event, bool) {
	statusChanged := old == nil || old.Status != c.Status || old.Reason != c.Reason
	note := fmt.Sprintf("%s: %s/%s: %s", c.Type, c.Status, c.Reason, c.Message)
	warn := func(reason string) (Event, bool) { return Event{corev1.EventTypeWarning, reason, note}, true }
	switch c.Type {
	case infrav1.PausedCondition:
		if c.Status == metav1.ConditionTrue {
			return Event{corev1.EventTypeNormal, "Paused", c.Message}, true
		}
		if old != nil && old.Status == metav1.ConditionTrue {
			return Event{corev1.EventTypeNormal, "Resumed", "The object is no longer paused"}, true
		}
		return Event{}, false
	case infrav1.DeletingCondition:
		if c.Status == metav1.ConditionTrue && statusChanged {
			return Event{corev1.EventTypeNormal, "DeletionStarted", c.Message}, true
		}
		return Event{}, false
	case infrav1.InfrastructureHealthyCondition:
		switch {
		case c.Status == metav1.ConditionTrue:
			return Event{corev1.EventTypeNormal, "InstanceHealthy", c.Message}, true
		case c.Status == metav1.ConditionFalse && c.Reason != infrav1.InstancePendingReason && c.Reason != infrav1.ProvisioningReason:
			return warn("InstanceUnhealthy")
		}
	case infrav1.OutputsValidCondition:
		if c.Status == metav1.ConditionFalse {
			return warn("OutputsInvalid")
		}
	case infrav1.IdentityAllowedCondition:
		if c.Status == metav1.ConditionFalse {
			return warn("IdentityNotAllowed")
		}
	case infrav1.StateReadableCondition:
		switch c.Reason {
		case infrav1.StateLostReason, infrav1.StateLockedReason, infrav1.RetainedStateFoundReason:
			return warn(c.Reason)
		case infrav1.ApplyOutcomeUnknownReason:
			return warn(infrav1.StateLostReason)
		case infrav1.StateCorruptReason, infrav1.StateEncryptedReason, infrav1.StateInconsistentReason:
			return warn("StateUnreadable")
		}
	case infrav1.DriftDetectedCondition:
		switch {
		case c.Status == metav1.ConditionTrue && (old == nil || old.Status != metav1.ConditionTrue || c.Reason == old.Reason):
			return warn("DriftDetected") // a finding, or a new one with other counts
		case c.Status == metav1.ConditionFalse && old != nil && old.Status == metav1.ConditionTrue:
			return Event{corev1.EventTypeNormal, "DriftResolved", c.Message}, true
		}
		return Event{}, false // remediation started or retried: their own events say it
	case infrav1.ApplyJobSucceededCondition, infrav1.DriftJobSucceededCondition, infrav1.RestoreJobSucceededCondition:
		return Event{}, false // their Jobs' events say it, once per Job
	}
	if !statusChanged {
		return Event{}, false
	}
	if bad(c) {
		return warn("ConditionChanged")
	}
	return Event{corev1.EventTypeNormal, "ConditionChanged", note}, true
}
