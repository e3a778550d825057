package workspace

// What a finished Job's outcome reports: the facts of its condition and
// event (conditions.Job), and status.lastRun. Pure.

import (
	"strings"

	batchv1 "k8s.io/api/batch/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
)

// jobFacts are what the report of a finished Job (conditions.Job) is
// computed from.
func jobFacts(o outcome, kind infrav1.RunErrorKind) conditions.JobFacts {
	j := o.job
	return conditions.JobFacts{Name: j.Name, Op: o.op, Succeeded: o.succeeded, Deadline: o.deadline, DeadlineSeconds: deref(j.Spec.ActiveDeadlineSeconds),
		ImagePullFailed: j.Annotations[infrav1.ImagePullFailedAnnotation] == "true", Image: reportedImage(j),
		RunnerImage:    j.Annotations[infrav1.RunnerImagePullFailedAnnotation] == "true",
		PlanUnreadable: o.op == decide.OpPlan && planUnreadable(o), Kind: kind, Summary: tail(o)}
}

// reportedImage is the image a Job's report names: its module image, or
// its runner image when that one could not be pulled.
func reportedImage(j *batchv1.Job) string {
	containers, name := j.Spec.Template.Spec.Containers, jobs.SourceContainer
	if j.Annotations[infrav1.RunnerImagePullFailedAnnotation] == "true" {
		containers, name = j.Spec.Template.Spec.InitContainers, jobs.RunnerContainer
	}
	for _, c := range containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

// tail is the runner's curated, redacted failure summary.
func tail(o outcome) string {
	if o.result == nil {
		return "the pod left no result document; see the Job's logs"
	}
	if o.result.Error == nil {
		return "the runner reported no error; see the Job's logs"
	}
	s := o.result.Error.Tail
	if o.result.Error.Step != "" {
		s = "step " + o.result.Error.Step + ": " + s
	}
	return strings.TrimSpace(s)
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// lastRun is status.lastRun from an outcome.
func lastRun(o outcome) *infrav1.LastRun {
	lr := &infrav1.LastRun{Job: o.job.Name, Operation: infrav1.Operation(o.op)}
	if o.result == nil {
		if !o.succeeded {
			lr.Error = &infrav1.RunError{Kind: infrav1.RunErrorInterrupted, Summary: "The pod left no result document"}
		}
		return lr
	}
	for i, s := range o.result.Steps {
		if i == 16 {
			break
		}
		lr.Steps = append(lr.Steps, infrav1.RunStep{Name: s.Name, ExitCode: int32(s.Exit), DurationMilliseconds: int64(s.Seconds * 1000)})
	}
	if e := o.result.Error; e != nil {
		lr.Error = &infrav1.RunError{Kind: e.Kind, Step: e.Step, Summary: cut(e.Tail, 512)}
	}
	if d := o.result.Drift; d != nil {
		lr.Drift = &infrav1.DriftSummary{Create: int32(d.Create), Update: int32(d.Update), Replace: int32(d.Replace), Delete: int32(d.Delete)}
	}
	return lr
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
