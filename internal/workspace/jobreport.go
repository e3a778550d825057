package workspace

// What a finished Job's outcome reports: the facts of its condition and
// event (conditions.Job), and status.lastRun. Pure.

import (
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
)

// jobFacts are what the report of a finished Job (conditions.Job) is
// computed from.
func jobFacts(o jobs.Outcome, kind infrav1.RunErrorKind) conditions.JobFacts {
	j := o.Job
	return conditions.JobFacts{Name: j.Name, Op: o.Op, Succeeded: o.Succeeded, Deadline: o.Deadline, DeadlineSeconds: ptr.Deref(j.Spec.ActiveDeadlineSeconds, 0),
		ImagePullFailed: j.Annotations[infrav1.ImagePullFailedAnnotation] == "true", Image: jobs.ReportedImage(j),
		RunnerImage:    j.Annotations[infrav1.RunnerImagePullFailedAnnotation] == "true",
		PlanUnreadable: o.Op == decide.OpPlan && o.PlanUnreadable(), Kind: kind, Summary: o.Tail()}
}
