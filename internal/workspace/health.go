package workspace

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
)

// providerIDGone starts the message of a machine treated as terminated
// because its provider_id stayed null.
const providerIDGone = "The module reported a null provider_id in two consecutive readings"

// providerIDHealth judges a machine whose provider_id turned null after it
// had one, over two readings: the first is Unknown/ProviderIDMissing
// (nothing else changes, spec.providerID is kept), the second in a row
// treats the instance as terminated. A pass over the same reading keeps
// the verdict.
func (p *pass) providerIDHealth(cond metav1.Condition, c roles.Contract, newReading bool) metav1.Condition {
	if !c.ProviderIDMissing() {
		return cond
	}
	prev := meta.FindStatusCondition(p.role.View(p.before).Status.Conditions, infrav1.InfrastructureHealthyCondition)
	missing := prev != nil && prev.Reason == infrav1.ProviderIDMissingReason
	terminated := prev != nil && prev.Reason == infrav1.InstanceTerminatedReason && strings.HasPrefix(prev.Message, providerIDGone)
	switch {
	case !newReading && (missing || terminated):
		return metav1.Condition{Type: prev.Type, Status: prev.Status, Reason: prev.Reason, Message: prev.Message}
	case missing || terminated:
		return metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionFalse, Reason: infrav1.InstanceTerminatedReason,
			Message: providerIDGone + ": the instance is treated as terminated (spec.providerID is kept)"}
	}
	return metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionUnknown, Reason: infrav1.ProviderIDMissingReason,
		Message: "The module reported a null provider_id although the machine has one; if the next reading is null too, the instance is treated as terminated"}
}

// countSample keeps the count of unhealthy samples of a kind that has one
// (roles.Remediator): a new reading counts, a pass over the same one
// does not.
func (p *pass) countSample(health metav1.Condition, newReading bool) {
	if r, ok := p.remediator(); ok && newReading {
		r.CountSample(p.obj, health)
	}
}
