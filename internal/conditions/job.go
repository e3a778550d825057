package conditions

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// JobFacts are what a finished Job's report is computed from.
type JobFacts struct {
	// Name is the Job's name and Op its operation.
	Name string
	Op   decide.Operation
	// Succeeded and Deadline: how the Job ended (a Job that failed may
	// have run out of its activeDeadlineSeconds, DeadlineSeconds).
	Succeeded, Deadline bool
	DeadlineSeconds     int64
	// ImagePullFailed: the Job was stopped because its module image (or,
	// when RunnerImage, its init container's runner image) could not be
	// pulled; Image is that image.
	ImagePullFailed, RunnerImage bool
	Image                        string
	// PlanUnreadable: a plan Job left no readable plan.
	PlanUnreadable bool
	// Kind is the kind of the runner's error ("" when none), and Summary
	// its curated, redacted failure summary.
	Kind    infrav1.RunErrorKind
	Summary string
}

// Event is an event a pass emits about its object once its status is
// written: a report's, a role's, a transition's.
type Event struct {
	// Type is Normal or Warning.
	Type   string
	Reason string
	Note   string
}

// DestroyReportedAt is when c, an object's ApplyJobSucceeded, came to say
// that its destroy succeeded (True/DestroySucceeded, which only a
// succeeded destroy Job reports and the outcome of any later apply or
// destroy replaces); zero when it does not say so.
func DestroyReportedAt(c *metav1.Condition) time.Time {
	if c == nil || c.Type != infrav1.ApplyJobSucceededCondition || c.Status != metav1.ConditionTrue || c.Reason != infrav1.DestroySucceededReason {
		return time.Time{}
	}
	return c.LastTransitionTime.Time
}

// Job is the condition a finished Job reports, on its operation's
// condition, and the event it emits once.
func Job(f JobFacts) (metav1.Condition, Event) {
	okReason, failReason, deadlineReason := infrav1.ApplySucceededReason, FailReason(f.Op), infrav1.JobDeadlineExceededReason
	switch f.Op {
	case decide.OpDestroy:
		okReason = infrav1.DestroySucceededReason
	case decide.OpRefresh, decide.OpDrift:
		okReason, deadlineReason = infrav1.DriftCheckedReason, infrav1.DriftJobDeadlineExceededReason
	case decide.OpRestore:
		okReason, deadlineReason = infrav1.StateRestoredReason, infrav1.RestoreFailedReason
	}
	c := metav1.Condition{Type: OpType(f.Op)}
	report := func(status metav1.ConditionStatus, reason, eventType, eventReason, msg string) (metav1.Condition, Event) {
		c.Status, c.Reason, c.Message = status, reason, msg
		return c, Event{eventType, eventReason, msg}
	}
	switch {
	case !f.Succeeded && f.ImagePullFailed && f.RunnerImage:
		return report(metav1.ConditionFalse, infrav1.ImagePullFailedReason, corev1.EventTypeWarning, "JobFailed",
			fmt.Sprintf("Job %s: the runner image %s could not be pulled, so the Job was stopped; check the manager's --runner-image and the image pull secrets (spec.jobs.imagePullSecrets)", f.Name, f.Image))
	case !f.Succeeded && f.ImagePullFailed:
		return report(metav1.ConditionFalse, infrav1.ImagePullFailedReason, corev1.EventTypeWarning, "JobFailed",
			fmt.Sprintf("Job %s: the module image %s could not be pulled, so the Job was stopped; check spec.source.image and the image pull secrets", f.Name, f.Image))
	case f.Succeeded && f.Op == decide.OpPlan && f.PlanUnreadable:
		return report(metav1.ConditionFalse, failReason, corev1.EventTypeWarning, "JobFailed",
			fmt.Sprintf("Job %s: the plan Job succeeded but reported no readable plan, so there is nothing to approve; "+
				"it counts as a failed plan and is planned again with the backoff. Check the Job's logs and that its runner image matches the manager", f.Name))
	case f.Succeeded && f.Op == decide.OpPlan:
		return report(metav1.ConditionUnknown, infrav1.PlanAwaitingApprovalReason, corev1.EventTypeNormal, "JobSucceeded", fmt.Sprintf("Job %s planned the inputs", f.Name))
	case f.Succeeded:
		return report(metav1.ConditionTrue, okReason, corev1.EventTypeNormal, "JobSucceeded", fmt.Sprintf("Job %s: %s succeeded", f.Name, f.Op))
	case f.Deadline:
		return report(metav1.ConditionFalse, deadlineReason, corev1.EventTypeWarning, "JobDeadlineExceeded",
			fmt.Sprintf("Job %s: %s exceeded its activeDeadlineSeconds (%ds); raise spec.jobs.activeDeadlineSeconds if the module needs longer", f.Name, f.Op, f.DeadlineSeconds))
	case f.Kind == infrav1.RunErrorInterrupted:
		return report(metav1.ConditionFalse, failReason, corev1.EventTypeWarning, "JobInterrupted",
			fmt.Sprintf("Job %s: %s was interrupted from outside (Job or pod deleted, node drained) and may have changed part of the infrastructure; it is retried at once", f.Name, f.Op))
	case f.Kind == infrav1.RunErrorImageLayout:
		return report(metav1.ConditionFalse, infrav1.ImageInvalidReason, corev1.EventTypeWarning, "JobFailed",
			fmt.Sprintf("Job %s: the module image breaks the image contract: %s", f.Name, f.Summary))
	case f.Kind == infrav1.RunErrorBlocked:
		return report(metav1.ConditionFalse, infrav1.DestructivePlanBlockedReason, corev1.EventTypeWarning, "DestructivePlanBlocked",
			fmt.Sprintf("Job %s: the plan deletes or replaces resources, so nothing was applied; approve its TerraformPlan to let it through", f.Name))
	case f.Kind == infrav1.RunErrorPlanChanged:
		return report(metav1.ConditionUnknown, infrav1.PlanChangedReason, corev1.EventTypeWarning, "PlanChanged",
			fmt.Sprintf("Job %s: the plan changed since it was approved, so nothing was applied", f.Name))
	}
	return report(metav1.ConditionFalse, failReason, corev1.EventTypeWarning, "JobFailed", fmt.Sprintf("Job %s: %s failed: %s", f.Name, f.Op, f.Summary))
}

// JobStarted is what a pass that started a Job reports: a refresh or
// drift check runs; the first apply of an object never provisioned
// provisions its infrastructure.
func JobStarted(job string, op decide.Operation, provisions bool) []metav1.Condition {
	var out []metav1.Condition
	if c, ok := DriftJobRunning(job, op); ok {
		out = append(out, c)
	}
	if op == decide.OpApply && provisions {
		out = append(out, metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionFalse, Reason: infrav1.ProvisioningReason,
			Message: fmt.Sprintf("Job %s provisions the infrastructure", job)})
	}
	return out
}

// DriftJobRunning is DriftJobSucceeded while a refresh or drift Job runs
// (ok false for another operation).
func DriftJobRunning(job string, op decide.Operation) (c metav1.Condition, ok bool) {
	if op != decide.OpRefresh && op != decide.OpDrift {
		return c, false
	}
	return metav1.Condition{Type: infrav1.DriftJobSucceededCondition, Status: metav1.ConditionUnknown, Reason: infrav1.DriftJobRunningReason,
		Message: fmt.Sprintf("Job %s runs a %s", job, op)}, true
}

// maxImagePullMessage bounds the message of a pod that cannot pull its
// image, which quotes the kubelet's own.
const maxImagePullMessage = 1024

// PullFailing: c reports a running Job's pod that cannot pull its image
// (ImagePullFailing), not a Job stopped for it (Job): a fact of now, not a
// Job's result.
func PullFailing(c metav1.Condition) bool {
	return c.Reason == infrav1.ImagePullFailedReason &&
		(strings.Contains(c.Message, " cannot pull module image ") || strings.Contains(c.Message, " cannot pull runner image "))
}

// ImagePullFailing is a running Job whose pod cannot pull its module
// image or, when runner, the runner image of its init container (the
// kubelet's waiting reason and message).
func ImagePullFailing(job string, op decide.Operation, runner bool, image, reason, message string) metav1.Condition {
	msg := fmt.Sprintf("Job %s cannot pull module image %s (%s: %s); check spec.source.image and the image pull secrets", job, image, reason, message)
	if runner {
		msg = fmt.Sprintf("Job %s cannot pull runner image %s (%s: %s); check the manager's --runner-image and the image pull secrets (spec.jobs.imagePullSecrets)",
			job, image, reason, message)
	}
	if len(msg) > maxImagePullMessage {
		msg = msg[:maxImagePullMessage]
	}
	return metav1.Condition{Type: OpType(op), Status: metav1.ConditionFalse, Reason: infrav1.ImagePullFailedReason, Message: msg}
}

// JobVanished is a running Job that vanished before it reported a result:
// an apply may have partly applied, and another is due; any other
// operation is retried.
func JobVanished(job string, op decide.Operation) (metav1.Condition, Event) {
	msg := fmt.Sprintf("Job %s: %s vanished before it reported a result (Job deleted, node lost)", job, op)
	if op == decide.OpApply {
		msg += " and may have partially applied; an apply of the current inputs is due"
	} else {
		msg += "; it is retried"
	}
	return metav1.Condition{Type: OpType(op), Status: metav1.ConditionFalse, Reason: FailReason(op), Message: msg},
		Event{Type: corev1.EventTypeWarning, Reason: "JobInterrupted", Note: msg}
}
