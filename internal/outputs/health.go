package outputs

import (
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// The health.state values of the contract.
const (
	StatePending    = "pending"
	StateRunning    = "running"
	StateDegraded   = "degraded"
	StateStopped    = "stopped"
	StateTerminated = "terminated"
	StateUnknown    = "unknown"
)

// MaxHealthMessage bounds the module's text (message and reasons) in the
// InfrastructureHealthy message, in bytes.
const MaxHealthMessage = 256

// Health is the module's health output.
type Health struct {
	// State is one of the State* values.
	State string
	// Healthy only matters when State is running.
	Healthy bool
	// Message is the module's message, "" when it gave none.
	Message string
	// Reasons are the module's machine-readable reasons.
	Reasons []string
}

// healthJSON is the health output's shape; extra attributes are ignored.
type healthJSON struct {
	State   string   `json:"state"`
	Healthy bool     `json:"healthy"`
	Message *string  `json:"message"`
	Reasons []string `json:"reasons"`
}

func (j healthJSON) health() *Health {
	h := &Health{State: j.State, Healthy: j.Healthy, Reasons: j.Reasons}
	if j.Message != nil {
		h.Message = *j.Message
	}
	return h
}

// Pending reports whether the module says the infrastructure is still
// being created: not provisioned yet, refreshed again soon.
func (h Health) Pending() bool { return h.State == StatePending }

// Condition returns InfrastructureHealthy for this reading (contract
// §10.2). Its message is the module's message and reasons, cut to
// MaxHealthMessage bytes, or a short sentence when the module gave none;
// no other output reaches it. ObservedGeneration and LastTransitionTime are
// left to the caller.
func (h Health) Condition() metav1.Condition {
	status, reason, sentence := metav1.ConditionUnknown, infrav1.HealthUnknownReason, "The module cannot tell the infrastructure's health"
	switch h.State {
	case StatePending:
		status, reason, sentence = metav1.ConditionFalse, infrav1.InstancePendingReason, "The module reports the infrastructure is still being created"
	case StateRunning:
		if h.Healthy {
			status, reason, sentence = metav1.ConditionTrue, infrav1.HealthyReason, "The module reports the infrastructure running and healthy"
		} else {
			status, reason, sentence = metav1.ConditionFalse, infrav1.InstanceUnhealthyReason, "The module reports the infrastructure running but not healthy"
		}
	case StateDegraded:
		status, reason, sentence = metav1.ConditionFalse, infrav1.InstanceDegradedReason, "The module reports the infrastructure degraded"
	case StateStopped:
		status, reason, sentence = metav1.ConditionFalse, infrav1.InstanceStoppedReason, "The module reports the infrastructure stopped"
	case StateTerminated:
		status, reason, sentence = metav1.ConditionFalse, infrav1.InstanceTerminatedReason, "The module reports the infrastructure terminated"
	}
	return metav1.Condition{
		Type:    infrav1.InfrastructureHealthyCondition,
		Status:  status,
		Reason:  reason,
		Message: h.message(sentence),
	}
}

// HealthCondition is h.Condition(), or Unknown/HealthUnknown when the
// health output is not known (nil).
func HealthCondition(h *Health) metav1.Condition {
	if h == nil {
		return metav1.Condition{
			Type:    infrav1.InfrastructureHealthyCondition,
			Status:  metav1.ConditionUnknown,
			Reason:  infrav1.HealthUnknownReason,
			Message: "The module reports no health yet",
		}
	}
	return h.Condition()
}

func (h Health) message(sentence string) string {
	text := strings.TrimSpace(h.Message)
	var reasons []string
	for _, r := range h.Reasons {
		if r = strings.TrimSpace(r); r != "" {
			reasons = append(reasons, r)
		}
	}
	switch {
	case text == "" && len(reasons) == 0:
		return sentence
	case text == "":
		text = sentence + " (" + strings.Join(reasons, ", ") + ")"
	case len(reasons) > 0:
		text += " (" + strings.Join(reasons, ", ") + ")"
	}
	return cut(strings.ToValidUTF8(text, "\uFFFD"), MaxHealthMessage)
}

// cut shortens s to at most n bytes on a rune boundary, ending in "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	end := n - len(ellipsis)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + ellipsis
}
