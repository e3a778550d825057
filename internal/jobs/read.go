package jobs

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AsRead is what a pass reads of its object's Jobs: their metadata (the
// operation, the attempt, the bookkept mark, the image annotations,
// deletion), their spec, and of their status the Complete and Failed
// conditions that say how they ended (Finished) and the completion time;
// not the pod counters the Job controller writes as the pod is created,
// becomes ready and ends, nor the SuccessCriteriaMet or FailureTarget
// conditions that come just before the end, nor the resourceVersion,
// managed fields and kind.
func AsRead(j *batchv1.Job) *batchv1.Job {
	r := &batchv1.Job{ObjectMeta: *j.ObjectMeta.DeepCopy(), Spec: *j.Spec.DeepCopy()}
	r.Status.CompletionTime = j.Status.CompletionTime
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			r.Status.Conditions = append(r.Status.Conditions, c)
		}
	}
	r.SetResourceVersion("")
	r.SetManagedFields(nil)
	r.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return r
}
