package jobs

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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

// imagePullWaiting are the waiting reasons of a container whose image
// cannot be pulled.
var imagePullWaiting = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true}

// ImagePullFailing returns the status of the container of pod that waits
// for an image it cannot pull: the runner init container
// (RunnerContainer, --runner-image), which runs first, or the module
// container (SourceContainer); nil when neither does. A pass reads it of
// its running Job's pod, and the Job's pod wakes its object when it starts
// or stops failing so.
func ImagePullFailing(pod *corev1.Pod) *corev1.ContainerStatus {
	for _, of := range []struct {
		statuses  []corev1.ContainerStatus
		container string
	}{{pod.Status.InitContainerStatuses, RunnerContainer}, {pod.Status.ContainerStatuses, SourceContainer}} {
		for i := range of.statuses {
			cs := &of.statuses[i]
			if w := cs.State.Waiting; w != nil && cs.Name == of.container && imagePullWaiting[w.Reason] {
				return cs
			}
		}
	}
	return nil
}
