package conditions

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// TestJob: what each way a Job can end reports, one row each: the
// condition (its operation's), its status and reason, a message naming
// the Job, and the event, which says the same.
func TestJob(t *testing.T) {
	ended := func(op decide.Operation, ok bool, change func(*JobFacts)) JobFacts {
		f := JobFacts{Name: "captf-c-demo-" + string(op) + "-a1-0abc12", Op: op, Succeeded: ok, DeadlineSeconds: 3600, Image: "registry.example/net:v1", Summary: "step apply: Error: quota exceeded"}
		if change != nil {
			change(&f)
		}
		return f
	}
	testCases := []struct {
		name       string
		facts      JobFacts
		typ        string
		status     metav1.ConditionStatus
		reason     string
		eventType  string
		eventWhy   string
		messageHas string
	}{
		{"an apply succeeded", ended(decide.OpApply, true, nil), infrav1.ApplyJobSucceededCondition, metav1.ConditionTrue, infrav1.ApplySucceededReason,
			corev1.EventTypeNormal, "JobSucceeded", "apply succeeded"},
		{"a destroy succeeded", ended(decide.OpDestroy, true, nil), infrav1.ApplyJobSucceededCondition, metav1.ConditionTrue, infrav1.DestroySucceededReason,
			corev1.EventTypeNormal, "JobSucceeded", "destroy succeeded"},
		{"a drift check succeeded", ended(decide.OpDrift, true, nil), infrav1.DriftJobSucceededCondition, metav1.ConditionTrue, infrav1.DriftCheckedReason,
			corev1.EventTypeNormal, "JobSucceeded", "drift succeeded"},
		{"a refresh succeeded", ended(decide.OpRefresh, true, nil), infrav1.DriftJobSucceededCondition, metav1.ConditionTrue, infrav1.DriftCheckedReason,
			corev1.EventTypeNormal, "JobSucceeded", "refresh succeeded"},
		{"a restore succeeded", ended(decide.OpRestore, true, nil), infrav1.RestoreJobSucceededCondition, metav1.ConditionTrue, infrav1.StateRestoredReason,
			corev1.EventTypeNormal, "JobSucceeded", "restore succeeded"},
		{"a plan waits for approval", ended(decide.OpPlan, true, nil), infrav1.ApplyJobSucceededCondition, metav1.ConditionUnknown, infrav1.PlanAwaitingApprovalReason,
			corev1.EventTypeNormal, "JobSucceeded", "planned the inputs"},
		{"a plan without a readable plan failed", ended(decide.OpPlan, true, func(f *JobFacts) { f.PlanUnreadable = true }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.ApplyFailedReason, corev1.EventTypeWarning, "JobFailed", "no readable plan"},
		{"an image that could not be pulled", ended(decide.OpApply, false, func(f *JobFacts) { f.ImagePullFailed = true }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.ImagePullFailedReason, corev1.EventTypeWarning, "JobFailed", "registry.example/net:v1 could not be pulled"},
		{"an apply past its deadline", ended(decide.OpApply, false, func(f *JobFacts) { f.Deadline = true }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.JobDeadlineExceededReason, corev1.EventTypeWarning, "JobDeadlineExceeded", "(3600s)"},
		{"a destroy past its deadline", ended(decide.OpDestroy, false, func(f *JobFacts) { f.Deadline = true }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.JobDeadlineExceededReason, corev1.EventTypeWarning, "JobDeadlineExceeded", "destroy exceeded"},
		{"a runner image that could not be pulled", ended(decide.OpApply, false, func(f *JobFacts) {
			f.ImagePullFailed, f.RunnerImage, f.Image = true, true, "registry.example/captf-manager:v0.4.0"
		}),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.ImagePullFailedReason, corev1.EventTypeWarning, "JobFailed", "runner image registry.example/captf-manager:v0.4.0 could not be pulled"},
		{"an image that could not be pulled stops the Job before its deadline counts", ended(decide.OpApply, false, func(f *JobFacts) { f.ImagePullFailed, f.Deadline = true, true }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.ImagePullFailedReason, corev1.EventTypeWarning, "JobFailed", "could not be pulled"},
		{"a drift check past its deadline", ended(decide.OpDrift, false, func(f *JobFacts) { f.Deadline = true }),
			infrav1.DriftJobSucceededCondition, metav1.ConditionFalse, infrav1.DriftJobDeadlineExceededReason, corev1.EventTypeWarning, "JobDeadlineExceeded", "activeDeadlineSeconds"},
		{"a restore past its deadline", ended(decide.OpRestore, false, func(f *JobFacts) { f.Deadline = true }),
			infrav1.RestoreJobSucceededCondition, metav1.ConditionFalse, infrav1.RestoreFailedReason, corev1.EventTypeWarning, "JobDeadlineExceeded", "activeDeadlineSeconds"},
		{"an interrupted destroy", ended(decide.OpDestroy, false, func(f *JobFacts) { f.Kind = infrav1.RunErrorInterrupted }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.DestroyFailedReason, corev1.EventTypeWarning, "JobInterrupted", "retried at once"},
		{"an image that breaks the contract", ended(decide.OpApply, false, func(f *JobFacts) { f.Kind, f.Summary = infrav1.RunErrorImageLayout, "no /module" }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.ImageInvalidReason, corev1.EventTypeWarning, "JobFailed", "no /module"},
		{"a destructive plan blocked", ended(decide.OpApply, false, func(f *JobFacts) { f.Kind = infrav1.RunErrorBlocked }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.DestructivePlanBlockedReason, corev1.EventTypeWarning, "DestructivePlanBlocked", "approve its TerraformPlan"},
		{"an approved plan that changed", ended(decide.OpApply, false, func(f *JobFacts) { f.Kind = infrav1.RunErrorPlanChanged }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionUnknown, infrav1.PlanChangedReason, corev1.EventTypeWarning, "PlanChanged", "changed since it was approved"},
		{"a failed apply names its summary", ended(decide.OpApply, false, func(f *JobFacts) { f.Kind = infrav1.RunErrorStep }),
			infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.ApplyFailedReason, corev1.EventTypeWarning, "JobFailed", "quota exceeded"},
		{"a failed drift check", ended(decide.OpDrift, false, nil),
			infrav1.DriftJobSucceededCondition, metav1.ConditionFalse, infrav1.DriftJobFailedReason, corev1.EventTypeWarning, "JobFailed", "drift failed"},
		{"a failed restore", ended(decide.OpRestore, false, nil),
			infrav1.RestoreJobSucceededCondition, metav1.ConditionFalse, infrav1.RestoreFailedReason, corev1.EventTypeWarning, "JobFailed", "restore failed"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c, ev := Job(tc.facts)
			if c.Type != tc.typ || c.Status != tc.status || c.Reason != tc.reason {
				t.Errorf("condition %s/%s/%s, want %s/%s/%s", c.Type, c.Status, c.Reason, tc.typ, tc.status, tc.reason)
			}
			if !strings.Contains(c.Message, tc.facts.Name) || !strings.Contains(c.Message, tc.messageHas) {
				t.Errorf("message %q, want it to name Job %s and say %q", c.Message, tc.facts.Name, tc.messageHas)
			}
			if ev.Type != tc.eventType || ev.Reason != tc.eventWhy || ev.Note != c.Message {
				t.Errorf("event %+v, want %s %s saying what the condition says", ev, tc.eventType, tc.eventWhy)
			}
		})
	}
}

// TestRunningJobReports: what a pass says of a Job it started, of one whose
// pod cannot pull its image, and of one that vanished.
func TestRunningJobReports(t *testing.T) {
	if got := JobStarted("j", decide.OpApply, false); len(got) != 0 {
		t.Errorf("an apply of a provisioned object reports %+v, want nothing", got)
	}
	if got := JobStarted("j", decide.OpApply, true); len(got) != 1 || got[0].Type != infrav1.InfrastructureHealthyCondition || got[0].Reason != infrav1.ProvisioningReason {
		t.Errorf("a first apply reports %+v, want InfrastructureHealthy Provisioning", got)
	}
	for _, op := range []decide.Operation{decide.OpRefresh, decide.OpDrift} {
		if got := JobStarted("j", op, true); len(got) != 1 || got[0].Type != infrav1.DriftJobSucceededCondition || got[0].Reason != infrav1.DriftJobRunningReason {
			t.Errorf("a %s reports %+v, want DriftJobSucceeded DriftJobRunning", op, got)
		}
	}
	if got := JobStarted("j", decide.OpDestroy, true); len(got) != 0 {
		t.Errorf("a destroy reports %+v, want nothing", got)
	}

	pull := ImagePullFailing("j", decide.OpDrift, false, "registry.example/net:v1", "ErrImagePull", strings.Repeat("x", 2000))
	if pull.Type != infrav1.DriftJobSucceededCondition || pull.Reason != infrav1.ImagePullFailedReason || len(pull.Message) != maxImagePullMessage ||
		!strings.HasPrefix(pull.Message, "Job j cannot pull module image registry.example/net:v1 (ErrImagePull: xxx") {
		t.Errorf("ImagePullFailing = %+v (%d bytes), want DriftJobSucceeded ImagePullFailed cut at %d bytes", pull, len(pull.Message), maxImagePullMessage)
	}
	if runner := ImagePullFailing("j", decide.OpApply, true, "registry.example/captf-manager:v0.4.0", "ImagePullBackOff", "m"); runner.Type != infrav1.ApplyJobSucceededCondition ||
		!strings.Contains(runner.Message, "cannot pull runner image registry.example/captf-manager:v0.4.0") || !strings.Contains(runner.Message, "--runner-image") {
		t.Errorf("a runner image that cannot be pulled: %+v, want ApplyJobSucceeded naming the runner image and --runner-image", runner)
	}

	for op, want := range map[decide.Operation]string{decide.OpApply: "may have partially applied", decide.OpDestroy: "it is retried"} {
		c, ev := JobVanished("j", op)
		if c.Status != metav1.ConditionFalse || c.Reason != FailReason(op) || !strings.Contains(c.Message, want) ||
			ev.Type != corev1.EventTypeWarning || ev.Reason != "JobInterrupted" || ev.Note != c.Message {
			t.Errorf("a vanished %s: %+v, %+v; want %s saying %q and a JobInterrupted warning", op, c, ev, FailReason(op), want)
		}
	}
}

// TestDestroyReportedAt: only ApplyJobSucceeded True/DestroySucceeded says
// a destroy succeeded; an apply's success, a failed destroy and no apply
// yet say nothing of the kind.
func TestDestroyReportedAt(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC))
	cond := func(typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
		return &metav1.Condition{Type: typ, Status: status, Reason: reason, LastTransitionTime: at}
	}
	testCases := []struct {
		name string
		c    *metav1.Condition
		want time.Time
	}{
		{"the destroy succeeded", cond(infrav1.ApplyJobSucceededCondition, metav1.ConditionTrue, infrav1.DestroySucceededReason), at.Time},
		{"an apply succeeded", cond(infrav1.ApplyJobSucceededCondition, metav1.ConditionTrue, infrav1.ApplySucceededReason), time.Time{}},
		{"the destroy failed", cond(infrav1.ApplyJobSucceededCondition, metav1.ConditionFalse, infrav1.DestroyFailedReason), time.Time{}},
		{"no apply yet", cond(infrav1.ApplyJobSucceededCondition, metav1.ConditionUnknown, infrav1.NoApplyYetReason), time.Time{}},
		{"another condition", cond(infrav1.RestoreJobSucceededCondition, metav1.ConditionTrue, infrav1.DestroySucceededReason), time.Time{}},
		{"no condition", nil, time.Time{}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := DestroyReportedAt(tc.c); !got.Equal(tc.want) {
				t.Errorf("DestroyReportedAt = %v, want %v", got, tc.want)
			}
		})
	}
}
