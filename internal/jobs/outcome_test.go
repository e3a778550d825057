package jobs

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/plan"
	"captf.io/captf/internal/runner/result"
)

// finishedJob is an apply Job that ended as cond says.
func finishedJob(cond batchv1.JobConditionType, reason string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "captf-c-demo-apply-a1-0a1b2c", Labels: map[string]string{infrav1.OperationLabel: "apply"}},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, Reason: reason}}}}
}

// podSaying is the Job's pod whose module container ended with message.
func podSaying(message string, started time.Time) corev1.Pod {
	return corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
		{Name: RunnerContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: `{"version":1}`}}},
		{Name: SourceContainer, ImageID: "example.test/cluster@sha256:0a1b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Message: message, StartedAt: metav1.NewTime(started)}}},
	}}}
}

// TestOutcomeOf: a finished Job's outcome is its end (success, deadline),
// and what its module container's termination message says when that is
// a result document of this version; the runner container's message is
// not read.
func TestOutcomeOf(t *testing.T) {
	started := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	doc, _ := json.Marshal(result.Document{Version: result.Version, Op: "apply", Error: &result.RunError{Kind: result.KindStep, Step: result.StepApply, Tail: "quota exceeded"}})
	for _, tc := range []struct {
		name                         string
		job                          *batchv1.Job
		pods                         []corev1.Pod
		succeeded, deadline, podSeen bool
		result                       bool
	}{
		{"a failed apply with its result", finishedJob(batchv1.JobFailed, "BackoffLimitExceeded"), []corev1.Pod{podSaying(string(doc), started)}, false, false, true, true},
		{"a deadline", finishedJob(batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded), []corev1.Pod{podSaying("", started)}, false, true, true, false},
		{"a message of another version", finishedJob(batchv1.JobComplete, ""), []corev1.Pod{podSaying(`{"version":2}`, started)}, true, false, true, false},
		{"a message that is no document", finishedJob(batchv1.JobFailed, ""), []corev1.Pod{podSaying("OOMKilled", started)}, false, false, true, false},
		{"no pod left", finishedJob(batchv1.JobFailed, ""), nil, false, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := OutcomeOf(tc.job, tc.pods)
			if o.Op != decide.OpApply || o.Succeeded != tc.succeeded || o.Deadline != tc.deadline || o.PodFound != tc.podSeen || (o.Result != nil) != tc.result {
				t.Fatalf("OutcomeOf = %+v, want op apply, succeeded %t, deadline %t, pod found %t, a result %t", o, tc.succeeded, tc.deadline, tc.podSeen, tc.result)
			}
			if tc.podSeen && (o.Digest != "example.test/cluster@sha256:0a1b" || !o.Started.Equal(started)) {
				t.Errorf("digest %q started %v, want the module container's", o.Digest, o.Started)
			}
		})
	}
}

// TestOutcomeReports: the failure summary and status.lastRun an outcome
// gives, within their bounds.
func TestOutcomeReports(t *testing.T) {
	j := finishedJob(batchv1.JobFailed, "")
	steps := make([]result.Step, 20)
	for i := range steps {
		steps[i] = result.Step{Name: "step", Exit: 1, Seconds: 1.5}
	}
	long := strings.Repeat("x", 600)
	failed := Outcome{Job: j, Op: decide.OpApply, Result: &result.Document{Steps: steps, Error: &result.RunError{Kind: result.KindStep, Step: result.StepApply, Tail: long + "\n"}}}
	if got := failed.Tail(); got != "step apply: "+long {
		t.Errorf("Tail = %.40q..., want the step and its summary, trimmed", got)
	}
	lr := failed.LastRun()
	if len(lr.Steps) != 16 || lr.Steps[0].DurationMilliseconds != 1500 || lr.Error == nil || len(lr.Error.Summary) != 512 || lr.Error.Step != result.StepApply {
		t.Errorf("LastRun = %d steps, error %+v; want 16 steps of 1500 ms and a 512-byte summary of step apply", len(lr.Steps), lr.Error)
	}
	gone := Outcome{Job: j, Op: decide.OpApply}
	if got := gone.Tail(); !strings.Contains(got, "no result document") {
		t.Errorf("Tail without a result = %q", got)
	}
	if lr := gone.LastRun(); lr.Error == nil || lr.Error.Kind != infrav1.RunErrorInterrupted {
		t.Errorf("LastRun of a failed Job without a result = %+v, want interrupted", lr.Error)
	}
	if lr := (Outcome{Job: j, Op: decide.OpApply, Succeeded: true}).LastRun(); lr.Error != nil {
		t.Errorf("LastRun of a success without a result = %+v, want no error", lr.Error)
	}
	drift := Outcome{Job: j, Op: decide.OpDrift, Succeeded: true, Result: &result.Document{Drift: &result.Drift{Drift: plan.Drift{Detected: true, Update: 2}}}}
	if lr := drift.LastRun(); lr.Drift == nil || lr.Drift.Update != 2 {
		t.Errorf("LastRun of a drift check = %+v, want its counts", lr.Drift)
	}
	if !gone.PlanUnreadable() || (Outcome{Result: &result.Document{Plan: &result.PlanSummary{Hash: "h"}}}).PlanUnreadable() {
		t.Error("PlanUnreadable: want true without a result, false with a plan")
	}
}

// TestReportedImage: a Job's report names its module image, or its
// runner image when that one could not be pulled.
func TestReportedImage(t *testing.T) {
	j := &batchv1.Job{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: RunnerContainer, Image: "example.test/captf:1"}},
		Containers:     []corev1.Container{{Name: SourceContainer, Image: "example.test/cluster:1"}},
	}}}}
	if got := ReportedImage(j); got != "example.test/cluster:1" {
		t.Errorf("ReportedImage = %q, want the module image", got)
	}
	j.Annotations = map[string]string{infrav1.RunnerImagePullFailedAnnotation: "true"}
	if got := ReportedImage(j); got != "example.test/captf:1" {
		t.Errorf("ReportedImage after the runner image failed = %q, want the runner image", got)
	}
}
