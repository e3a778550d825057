package workspace

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func cond(t string, s metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason}
}

func TestReady(t *testing.T) {
	types := []string{infrav1.ApplyJobSucceededCondition, infrav1.InfrastructureHealthyCondition, infrav1.DeletingCondition}
	testCases := []struct {
		name   string
		conds  []metav1.Condition
		want   metav1.ConditionStatus
		reason string
		names  string
	}{
		{"all true, Deleting false", []metav1.Condition{cond(types[0], "True", "ApplySucceeded"), cond(types[1], "True", "Healthy"), cond(types[2], "False", "NotDeleting")},
			metav1.ConditionTrue, infrav1.ReadyReason, ""},
		{"a missing Deleting is ignored", []metav1.Condition{cond(types[0], "True", "a"), cond(types[1], "True", "b")}, metav1.ConditionTrue, infrav1.ReadyReason, ""},
		{"a missing condition is unknown", []metav1.Condition{cond(types[0], "True", "a")}, metav1.ConditionUnknown, infrav1.ReadyUnknownReason, types[1]},
		{"unknown", []metav1.Condition{cond(types[0], "Unknown", "NoApplyYet"), cond(types[1], "True", "b")}, metav1.ConditionUnknown, infrav1.ReadyUnknownReason, "NoApplyYet"},
		{"false beats unknown", []metav1.Condition{cond(types[0], "False", "ApplyFailed"), cond(types[1], "Unknown", "HealthUnknown")},
			metav1.ConditionFalse, infrav1.NotReadyReason, "ApplyFailed"},
		{"deleting is not ready", []metav1.Condition{cond(types[0], "True", "a"), cond(types[1], "True", "b"), cond(types[2], "True", "Deleting")},
			metav1.ConditionFalse, infrav1.NotReadyReason, infrav1.DeletingCondition},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := ready(tc.conds, types)
			if got.Status != tc.want || got.Reason != tc.reason || !strings.Contains(got.Message, tc.names) {
				t.Errorf("ready = %+v, want %s/%s naming %q", got, tc.want, tc.reason, tc.names)
			}
		})
	}
}
