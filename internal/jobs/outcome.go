package jobs

import (
	"encoding/json"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/runner/result"
)

// Outcome is what a finished Job left, as the Job and its pod say it.
type Outcome struct {
	Job       *batchv1.Job
	Op        decide.Operation
	Succeeded bool
	// Deadline: the Job's activeDeadlineSeconds stopped it.
	Deadline bool
	// Result is the runner's result document; nil when the pod is gone or
	// its termination message is not one.
	Result *result.Document
	// Digest is the image the pod ran, as its container status reports it.
	Digest string
	// PodFound: the Job's pod still exists.
	PodFound bool
	// Started is when the module container started (zero: unknown).
	Started time.Time
}

// OutcomeOf reads the outcome of j, a finished Job, from pods, its pods
// (labelled batch.kubernetes.io/job-name with its name): the module
// container's termination message is the runner's result document when it
// parses as one of this version.
func OutcomeOf(j *batchv1.Job, pods []corev1.Pod) Outcome {
	_, ok, _, deadline := Finished(j)
	o := Outcome{Job: j, Op: Op(j), Succeeded: ok, Deadline: deadline, PodFound: len(pods) > 0}
	for _, pod := range pods {
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name != SourceContainer || cs.State.Terminated == nil {
				continue
			}
			var res result.Document
			if json.Unmarshal([]byte(cs.State.Terminated.Message), &res) == nil && res.Version == result.Version {
				o.Result = &res
			}
			o.Digest = cs.ImageID
			o.Started = cs.State.Terminated.StartedAt.Time
		}
	}
	return o
}

// PlanUnreadable: the result carries no plan (or there is no result at
// all).
func (o Outcome) PlanUnreadable() bool { return o.Result == nil || o.Result.Plan == nil }

// Tail is the runner's curated, redacted failure summary.
func (o Outcome) Tail() string {
	if o.Result == nil {
		return "the pod left no result document; see the Job's logs"
	}
	if o.Result.Error == nil {
		return "the runner reported no error; see the Job's logs"
	}
	s := o.Result.Error.Tail
	if o.Result.Error.Step != "" {
		s = "step " + o.Result.Error.Step + ": " + s
	}
	return strings.TrimSpace(s)
}

// LastRun is the object's status.lastRun after the Job: its steps (the
// first 16), its error (its summary cut to 512 bytes) and a drift check's
// counts.
func (o Outcome) LastRun() *infrav1.LastRun {
	lr := &infrav1.LastRun{Job: o.Job.Name, Operation: infrav1.Operation(o.Op)}
	if o.Result == nil {
		if !o.Succeeded {
			lr.Error = &infrav1.RunError{Kind: infrav1.RunErrorInterrupted, Summary: "The pod left no result document"}
		}
		return lr
	}
	for i, s := range o.Result.Steps {
		if i == 16 {
			break
		}
		lr.Steps = append(lr.Steps, infrav1.RunStep{Name: s.Name, ExitCode: int32(s.Exit), DurationMilliseconds: int64(s.Seconds * 1000)})
	}
	if e := o.Result.Error; e != nil {
		lr.Error = &infrav1.RunError{Kind: e.Kind, Step: e.Step, Summary: e.Tail[:min(len(e.Tail), 512)]}
	}
	if d := o.Result.Drift; d != nil {
		lr.Drift = &infrav1.DriftSummary{Create: int32(d.Create), Update: int32(d.Update), Replace: int32(d.Replace), Delete: int32(d.Delete)}
	}
	return lr
}

// ReportedImage is the image a Job's report names: its module image, or
// its runner image when that one could not be pulled.
func ReportedImage(j *batchv1.Job) string {
	containers, name := j.Spec.Template.Spec.Containers, SourceContainer
	if j.Annotations[infrav1.RunnerImagePullFailedAnnotation] == "true" {
		containers, name = j.Spec.Template.Spec.InitContainers, RunnerContainer
	}
	for _, c := range containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}
