package workspace

import (
	"errors"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestRunningReportsGoWithTheirJob: a drift Job, or a drift remediation's
// apply, is said to run by every pass while it runs (DriftJobRunning,
// DriftRemediating); deleted without an outcome (here as stuck: its pod
// never started and its per-run Secret is gone), it takes the report with
// it, and the condition says again what it said before the Job. Both used
// to name the deleted Job until another Job reported.
func TestRunningReportsGoWithTheirJob(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	checked := metav1.Condition{Type: infrav1.DriftJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftCheckedReason, Message: "Job d0 found no drift"}
	finding := conditions.DriftChecked(conditions.DriftFinding{Job: "d0", Detected: true, Update: 1, Remediates: true})
	for _, tc := range []struct {
		name, op   string
		remediates bool
		condType   string
		running    string
		before     metav1.Condition
	}{
		{"a drift Job", "drift", false, infrav1.DriftJobSucceededCondition, infrav1.DriftJobRunningReason, checked},
		{"a remediation apply", "apply", true, infrav1.DriftDetectedCondition, infrav1.DriftRemediatingReason, finding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := newCluster(t, "running-"+tc.op, "c")
			obj.Status.Conditions = []metav1.Condition{tc.before}
			job := suspendedJob(obj.Namespace, tc.op)
			if tc.remediates {
				job.Annotations = map[string]string{infrav1.DriftRemediationAnnotation: "true"}
			}
			if err := env.Client.Create(ctx, job); err != nil {
				t.Fatal(err)
			}
			e := &Engine{Client: env.Client, APIReader: env.Client}
			// pass runs the steps of a pass that look at the active Job,
			// after, and writes the status as patchStatus computes it.
			pass := func(after time.Duration, start bool) *metav1.Condition {
				t.Helper()
				p := &pass{e: e, role: role, obj: obj, w: role.View(obj), before: obj.DeepCopy(), now: job.CreationTimestamp.Add(after), decided: &decide.Decision{}}
				if start { // the pass that created it
					if tc.remediates {
						p.remediationStarted(job.Name)
					} else {
						for _, c := range conditions.JobStarted(job.Name, decide.OpDrift, false) {
							p.report(c)
						}
					}
				} else if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err == nil {
					p.active = job
					if err := p.checkActive(ctx); err != nil {
						t.Fatal(err)
					}
					p.sayRunning()
					doJobChores(t, p)
				} else if !apierrors.IsNotFound(err) {
					t.Fatal(err)
				}
				st := &obj.Status.WorkspaceStatus
				endPass(p, st, true)
				return meta.FindStatusCondition(st.Conditions, tc.condType)
			}
			if c := pass(0, true); c.Reason != tc.running {
				t.Fatalf("when the Job starts %s = %+v, want %s", tc.condType, c, tc.running)
			}
			if c := pass(30*time.Second, false); c.Reason != tc.running {
				t.Fatalf("while the Job runs %s = %+v, want %s", tc.condType, c, tc.running)
			}
			// Stuck: deleted by this pass; nothing is due after it.
			if c := pass(StuckJobAge+time.Second, false); c.Reason != tc.before.Reason || c.Message != tc.before.Message {
				t.Fatalf("the Job deleted as stuck, %s = %+v, want what it said before it (%s)", tc.condType, c, tc.before.Message)
			}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}); !apierrors.IsNotFound(err) {
				t.Errorf("the stuck Job is still there (%v)", err)
			}
		})
	}
}

// TestAFailedPassStillDeletesAStuckJob: a pass that found a stuck Job and
// then failed before its chores (a read of its records, its state, its
// inputs) still deletes the Job and reports its own error: the Job holds
// a run lease and a Job slot, and no other pass would take them back
// while the error lasts. A pass that did its chores does nothing more.
func TestAFailedPassStillDeletesAStuckJob(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	obj := newCluster(t, "stuck-failed", "c")
	job := suspendedJob(obj.Namespace, "apply")
	if err := env.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	e := &Engine{Client: env.Client, APIReader: env.Client}
	p := &pass{e: e, role: role, obj: obj, w: role.View(obj), before: obj.DeepCopy(), now: job.CreationTimestamp.Add(StuckJobAge + time.Second), active: job}
	if err := p.checkActive(ctx); err != nil {
		t.Fatal(err)
	}
	if p.running.stuck == nil || p.active != nil {
		t.Fatalf("the Job is not found stuck: stuck %v, active %v", p.running.stuck, p.active)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}); err != nil {
		t.Fatalf("the stuck Job went before the pass's chores: %v", err)
	}
	failure := errors.New("reading inputs record: the server is currently unable to handle the request")
	if err := p.choresAfter(ctx, failure); !errors.Is(err, failure) {
		t.Errorf("the failed pass returns %v, want its own error", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("the stuck Job of a failed pass is still there (%v)", err)
	}
	if n := len(p.events); n != 1 || p.events[0].Reason != "StuckJobDeleted" {
		t.Errorf("events %+v, want StuckJobDeleted", p.events)
	}
	if err := p.choresAfter(ctx, failure); !errors.Is(err, failure) || len(p.events) != 1 {
		t.Errorf("chores done twice: %v, events %+v", err, p.events)
	}
}

// suspendedJob is a first attempt of op of TerraformCluster c in ns, never
// started: its pod never runs.
func suspendedJob(ns, op string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "captf-c-c-" + op + "-a1-0a1b2c",
		Labels: map[string]string{infrav1.OperationLabel: op, infrav1.AttemptLabel: "1"}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "source", Image: "example.test/cluster:1"}}}}}}
}
