package conditions

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func reasons(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type+"/"+e.Reason)
	}
	return out
}

func TestTransitionEvents(t *testing.T) {
	c := func(typ string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg}
	}
	testCases := []struct {
		name          string
		before, after []metav1.Condition
		want          []string
	}{
		{"a new object is quiet", nil, []metav1.Condition{
			c(infrav1.ReadyCondition, "Unknown", "ReadyUnknown", ""), c(infrav1.PausedCondition, "False", "NotPaused", ""),
			c(infrav1.DeletingCondition, "False", "NotDeleting", ""), c(infrav1.StateReadableCondition, "Unknown", "StateNotFound", ""),
		}, nil},
		{"a condition that starts bad speaks", nil, []metav1.Condition{c(infrav1.IdentityAllowedCondition, "False", "IdentityNotFound", "x")},
			[]string{"Warning/IdentityNotAllowed"}},
		{"nothing changed", []metav1.Condition{c(infrav1.ReadyCondition, "True", "Ready", "")}, []metav1.Condition{c(infrav1.ReadyCondition, "True", "Ready", "")}, nil},
		{"paused and resumed", []metav1.Condition{c(infrav1.PausedCondition, "False", "NotPaused", "")}, []metav1.Condition{c(infrav1.PausedCondition, "True", "Paused", "p")},
			[]string{"Normal/Paused"}},
		{"resumed", []metav1.Condition{c(infrav1.PausedCondition, "True", "Paused", "")}, []metav1.Condition{c(infrav1.PausedCondition, "False", "NotPaused", "")},
			[]string{"Normal/Resumed"}},
		{"deletion starts", []metav1.Condition{c(infrav1.DeletingCondition, "False", "NotDeleting", "")}, []metav1.Condition{c(infrav1.DeletingCondition, "True", "Deleting", "d")},
			[]string{"Normal/DeletionStarted"}},
		{"healthy", []metav1.Condition{c(infrav1.InfrastructureHealthyCondition, "False", "Provisioning", "")}, []metav1.Condition{c(infrav1.InfrastructureHealthyCondition, "True", "Healthy", "")},
			[]string{"Normal/InstanceHealthy"}},
		{"unhealthy", []metav1.Condition{c(infrav1.InfrastructureHealthyCondition, "True", "Healthy", "")}, []metav1.Condition{c(infrav1.InfrastructureHealthyCondition, "False", "InstanceStopped", "")},
			[]string{"Warning/InstanceUnhealthy"}},
		{"state lost", []metav1.Condition{c(infrav1.StateReadableCondition, "True", "StateRead", "")}, []metav1.Condition{c(infrav1.StateReadableCondition, "False", "StateLost", "")},
			[]string{"Warning/StateLost"}},
		{"corrupt state", []metav1.Condition{c(infrav1.StateReadableCondition, "True", "StateRead", "")}, []metav1.Condition{c(infrav1.StateReadableCondition, "False", "StateCorrupt", "")},
			[]string{"Warning/StateUnreadable"}},
		{"outputs invalid again on a new message", []metav1.Condition{c(infrav1.OutputsValidCondition, "False", "OutputsInvalid", "a")},
			[]metav1.Condition{c(infrav1.OutputsValidCondition, "False", "OutputsInvalid", "b")}, []string{"Warning/OutputsInvalid"}},
		{"drift found", []metav1.Condition{c(infrav1.DriftDetectedCondition, "Unknown", "DriftNotChecked", "")},
			[]metav1.Condition{c(infrav1.DriftDetectedCondition, "True", "DriftReported", "1 to create")}, []string{"Warning/DriftDetected"}},
		{"drift found again with other counts", []metav1.Condition{c(infrav1.DriftDetectedCondition, "True", "DriftReported", "1 to create")},
			[]metav1.Condition{c(infrav1.DriftDetectedCondition, "True", "DriftReported", "2 to create")}, []string{"Warning/DriftDetected"}},
		{"remediation starting is not a new finding", []metav1.Condition{c(infrav1.DriftDetectedCondition, "True", "DriftPending", "a")},
			[]metav1.Condition{c(infrav1.DriftDetectedCondition, "True", "DriftRemediating", "b")}, nil},
		{"drift resolved", []metav1.Condition{c(infrav1.DriftDetectedCondition, "True", "DriftRemediating", "a")},
			[]metav1.Condition{c(infrav1.DriftDetectedCondition, "False", "NoDrift", "b")}, []string{"Normal/DriftResolved"}},
		{"no drift on the first check is quiet", []metav1.Condition{c(infrav1.DriftDetectedCondition, "Unknown", "DriftNotChecked", "")},
			[]metav1.Condition{c(infrav1.DriftDetectedCondition, "False", "NoDrift", "b")}, nil},
		{"Job conditions speak through their Jobs", []metav1.Condition{c(infrav1.ApplyJobSucceededCondition, "True", "ApplySucceeded", "")},
			[]metav1.Condition{c(infrav1.ApplyJobSucceededCondition, "False", "ApplyFailed", "")}, nil},
		{"others: ConditionChanged, a warning into a bad state", []metav1.Condition{c(infrav1.ReadyCondition, "True", "Ready", "")},
			[]metav1.Condition{c(infrav1.ReadyCondition, "False", "NotReady", "")}, []string{"Warning/ConditionChanged"}},
		{"others: ConditionChanged, normal out of it", []metav1.Condition{c(infrav1.ReadyCondition, "False", "NotReady", "")},
			[]metav1.Condition{c(infrav1.ReadyCondition, "True", "Ready", "")}, []string{"Normal/ConditionChanged"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := reasons(Transitions(tc.before, tc.after)); !slices.Equal(got, tc.want) {
				t.Errorf("events = %v, want %v", got, tc.want)
			}
		})
	}
}
