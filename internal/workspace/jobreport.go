package workspace

// What a finished Job's outcome reports: its condition and event, and
// status.lastRun. Pure.

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
)

// jobCondition is the condition a finished Job sets and the event it
// emits once.
func jobCondition(o outcome, kind infrav1.RunErrorKind) (metav1.Condition, event) {
	j := o.job
	condType, okReason, failReason, deadlineReason := infrav1.ApplyJobSucceededCondition, infrav1.ApplySucceededReason, infrav1.ApplyFailedReason, infrav1.JobDeadlineExceededReason
	switch o.op {
	case decide.OpDestroy:
		okReason, failReason = infrav1.DestroySucceededReason, infrav1.DestroyFailedReason
	case decide.OpRefresh, decide.OpDrift:
		condType, okReason, failReason, deadlineReason = infrav1.DriftJobSucceededCondition, infrav1.DriftCheckedReason, infrav1.DriftJobFailedReason, infrav1.DriftJobDeadlineExceededReason
	case decide.OpRestore:
		condType, okReason, failReason, deadlineReason = infrav1.RestoreJobSucceededCondition, infrav1.StateRestoredReason, infrav1.RestoreFailedReason, infrav1.RestoreFailedReason
	}
	c := metav1.Condition{Type: condType}
	switch {
	case !o.succeeded && j.Annotations[infrav1.ImagePullFailedAnnotation] == "true":
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.ImagePullFailedReason
		c.Message = fmt.Sprintf("Job %s: the module image %s could not be pulled, so the Job was stopped; check spec.source.image and the image pull secrets", j.Name, sourceImage(j))
		return c, event{corev1.EventTypeWarning, "JobFailed", c.Message}
	case o.succeeded && o.op == decide.OpPlan && planUnreadable(o):
		c.Status, c.Reason = metav1.ConditionFalse, failReason
		c.Message = fmt.Sprintf("Job %s: the plan Job succeeded but reported no readable plan, so there is nothing to approve; "+
			"it counts as a failed plan and is planned again with the backoff. Check the Job's logs and that its runner image matches the manager", j.Name)
		return c, event{corev1.EventTypeWarning, "JobFailed", c.Message}
	case o.succeeded && o.op == decide.OpPlan:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, infrav1.PlanAwaitingApprovalReason, fmt.Sprintf("Job %s planned the inputs", j.Name)
		return c, event{corev1.EventTypeNormal, "JobSucceeded", c.Message}
	case o.succeeded:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, okReason, fmt.Sprintf("Job %s: %s succeeded", j.Name, o.op)
		return c, event{corev1.EventTypeNormal, "JobSucceeded", c.Message}
	case o.deadline:
		c.Status, c.Reason = metav1.ConditionFalse, deadlineReason
		c.Message = fmt.Sprintf("Job %s: %s exceeded its activeDeadlineSeconds (%ds); raise spec.jobs.activeDeadlineSeconds if the module needs longer", j.Name, o.op, deref(j.Spec.ActiveDeadlineSeconds))
		return c, event{corev1.EventTypeWarning, "JobDeadlineExceeded", c.Message}
	case kind == infrav1.RunErrorInterrupted:
		c.Status, c.Reason = metav1.ConditionFalse, failReason
		c.Message = fmt.Sprintf("Job %s: %s was interrupted from outside (Job or pod deleted, node drained) and may have changed part of the infrastructure; it is retried at once", j.Name, o.op)
		return c, event{corev1.EventTypeWarning, "JobInterrupted", c.Message}
	case kind == infrav1.RunErrorImageLayout:
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.ImageInvalidReason
		c.Message = fmt.Sprintf("Job %s: the module image breaks the image contract: %s", j.Name, tail(o))
		return c, event{corev1.EventTypeWarning, "JobFailed", c.Message}
	case kind == infrav1.RunErrorBlocked:
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.DestructivePlanBlockedReason
		c.Message = fmt.Sprintf("Job %s: the plan deletes or replaces resources, so nothing was applied; approve its TerraformPlan to let it through", j.Name)
		return c, event{corev1.EventTypeWarning, "DestructivePlanBlocked", c.Message}
	case kind == infrav1.RunErrorPlanChanged:
		c.Status, c.Reason = metav1.ConditionUnknown, infrav1.PlanChangedReason
		c.Message = fmt.Sprintf("Job %s: the plan changed since it was approved, so nothing was applied", j.Name)
		return c, event{corev1.EventTypeWarning, "PlanChanged", c.Message}
	}
	c.Status, c.Reason = metav1.ConditionFalse, failReason
	c.Message = fmt.Sprintf("Job %s: %s failed: %s", j.Name, o.op, tail(o))
	return c, event{corev1.EventTypeWarning, "JobFailed", c.Message}
}

// sourceImage is the module image of a Job.
func sourceImage(j *batchv1.Job) string {
	for _, c := range j.Spec.Template.Spec.Containers {
		if c.Name == jobs.SourceContainer {
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
