package metrics

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// stateReadErrorReasons name the StateReadable reasons in
// captf_state_read_errors_total.
var stateReadErrorReasons = map[string]string{
	infrav1.StateInconsistentReason: "inconsistent", infrav1.StateEncryptedReason: "encrypted", infrav1.StateCorruptReason: "corrupt",
	infrav1.StateLostReason: "lost", infrav1.StateLockedReason: "locked", infrav1.ApplyOutcomeUnknownReason: "lost",
}

// identityDeniedReasons maps IdentityAllowed's False reasons to the
// captf_identity_denied_total reasons.
var identityDeniedReasons = map[string]string{
	infrav1.IdentityNotFoundReason: "notfound", infrav1.CredentialsIncompleteReason: "incomplete", infrav1.NamespaceNotAllowedReason: "namespace",
}

// ObserveConditions exports an object's condition gauges (captf_ready,
// captf_infrastructure_healthy, captf_drift_detected) from its conditions
// after a pass, and counts what a condition entering False (from before,
// the conditions as the object had them) says: a state read error, a
// restore's backup not found, invalid outputs, an identity denied. A
// condition False before with the same reason counts nothing again.
func ObserveConditions(kind, namespace, name string, before, after []metav1.Condition) {
	if c := meta.FindStatusCondition(after, infrav1.ReadyCondition); c != nil {
		Ready.WithLabelValues(kind, namespace, name).Set(ConditionValue(string(c.Status)))
	}
	if c := meta.FindStatusCondition(after, infrav1.InfrastructureHealthyCondition); c != nil {
		Healthy.WithLabelValues(kind, namespace, name).Set(ConditionValue(string(c.Status)))
	}
	drift := 0.0
	if c := meta.FindStatusCondition(after, infrav1.DriftDetectedCondition); c != nil && c.Status == metav1.ConditionTrue {
		drift = 1
	}
	DriftDetected.WithLabelValues(kind, namespace, name).Set(drift)
	entered := func(t string) *metav1.Condition {
		c, old := meta.FindStatusCondition(after, t), meta.FindStatusCondition(before, t)
		if c == nil || c.Status != metav1.ConditionFalse || (old != nil && old.Status == c.Status && old.Reason == c.Reason) {
			return nil
		}
		return c
	}
	if c := entered(infrav1.StateReadableCondition); c != nil && stateReadErrorReasons[c.Reason] != "" {
		StateReadErrors.WithLabelValues(kind, stateReadErrorReasons[c.Reason]).Inc()
	}
	if c := entered(infrav1.RestoreJobSucceededCondition); c != nil && c.Reason == infrav1.RestoreBackupNotFoundReason {
		ObserveStateRestore(kind, "not_found")
	}
	if c := entered(infrav1.OutputsValidCondition); c != nil {
		ObserveOutputsInvalid(kind, c.Reason)
	}
	if c := entered(infrav1.IdentityAllowedCondition); c != nil && identityDeniedReasons[c.Reason] != "" {
		ObserveIdentityDenied(identityDeniedReasons[c.Reason])
	}
}
