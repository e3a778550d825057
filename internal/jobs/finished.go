package jobs

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Finished reads a Job the way the manager does: whether it finished (a
// Complete or Failed condition that is True), whether it succeeded, when,
// and whether its deadline killed it.
func Finished(j *batchv1.Job) (finished, succeeded bool, at time.Time, deadline bool) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, true, c.LastTransitionTime.Time, false
		case batchv1.JobFailed:
			return true, false, c.LastTransitionTime.Time, c.Reason == batchv1.JobReasonDeadlineExceeded
		}
	}
	return false, false, time.Time{}, false
}
