package jobs

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFinished(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	cond := func(typ batchv1.JobConditionType, status corev1.ConditionStatus, reason string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: status, Reason: reason, LastTransitionTime: at}
	}
	testCases := []struct {
		name                          string
		conds                         []batchv1.JobCondition
		finished, succeeded, deadline bool
	}{
		{"running", nil, false, false, false},
		{"suspended", []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue, "")}, false, false, false},
		{"complete", []batchv1.JobCondition{cond(batchv1.JobComplete, corev1.ConditionTrue, "")}, true, true, false},
		{"failed", []batchv1.JobCondition{cond(batchv1.JobFailed, corev1.ConditionTrue, batchv1.JobReasonBackoffLimitExceeded)}, true, false, false},
		{"deadline", []batchv1.JobCondition{cond(batchv1.JobFailed, corev1.ConditionTrue, batchv1.JobReasonDeadlineExceeded)}, true, false, true},
		{"a condition that is not True", []batchv1.JobCondition{cond(batchv1.JobComplete, corev1.ConditionFalse, "")}, false, false, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			finished, succeeded, when, deadline := Finished(&batchv1.Job{Status: batchv1.JobStatus{Conditions: tc.conds}})
			if finished != tc.finished || succeeded != tc.succeeded || deadline != tc.deadline {
				t.Errorf("Finished = %v, %v, deadline %v; want %v, %v, %v", finished, succeeded, deadline, tc.finished, tc.succeeded, tc.deadline)
			}
			if finished != !when.IsZero() || (finished && !when.Equal(at.Time)) {
				t.Errorf("finished at %v", when)
			}
		})
	}
}
