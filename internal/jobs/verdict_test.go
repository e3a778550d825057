package jobs

import (
	"maps"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/runner/result"
)

// TestVerdict: what bookkeeping makes of each way a Job ends, before any
// write: how it failed, the marks it takes, and whether it is a new
// health reading.
func TestVerdict(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "captf-c-prod-apply-a1-0a0b0c"}}
	failed := func(kind infrav1.RunErrorKind) *result.Document {
		return &result.Document{Error: &result.RunError{Kind: kind}}
	}
	testCases := []struct {
		name      string
		o         Outcome
		kind      infrav1.RunErrorKind
		marks     map[string]string
		newSample bool
	}{
		{"a succeeded apply", Outcome{Job: job, Op: decide.OpApply, Succeeded: true, Result: &result.Document{}}, "", map[string]string{}, true},
		{"a succeeded refresh", Outcome{Job: job, Op: decide.OpRefresh, Succeeded: true, Result: &result.Document{}}, "", map[string]string{}, true},
		{"a succeeded destroy is no reading", Outcome{Job: job, Op: decide.OpDestroy, Succeeded: true, Result: &result.Document{}}, "", map[string]string{}, false},
		{"blocked before a destructive plan", Outcome{Job: job, Op: decide.OpApply, Result: failed(infrav1.RunErrorBlocked), PodFound: true}, infrav1.RunErrorBlocked,
			map[string]string{infrav1.DestructivePlanBlockedAnnotation: "true"}, false},
		{"stopped by a changed plan", Outcome{Job: job, Op: decide.OpApply, Result: failed(infrav1.RunErrorPlanChanged), PodFound: true}, infrav1.RunErrorPlanChanged,
			map[string]string{infrav1.PlanChangedAnnotation: "true"}, false},
		{"interrupted", Outcome{Job: job, Op: decide.OpApply, Result: failed(infrav1.RunErrorInterrupted), PodFound: true}, infrav1.RunErrorInterrupted,
			map[string]string{infrav1.InterruptedAnnotation: "true"}, false},
		{"interrupted by its deadline: not marked", Outcome{Job: job, Op: decide.OpApply, Deadline: true, Result: failed(infrav1.RunErrorInterrupted), PodFound: true},
			infrav1.RunErrorInterrupted, map[string]string{}, false},
		{"no result and no pod: stopped from outside", Outcome{Job: job, Op: decide.OpApply}, infrav1.RunErrorInterrupted,
			map[string]string{infrav1.InterruptedAnnotation: "true"}, false},
		{"no result but a pod: a failure", Outcome{Job: job, Op: decide.OpApply, PodFound: true}, "", map[string]string{}, false},
		{"no result, no pod, but its deadline: a failure", Outcome{Job: job, Op: decide.OpApply, Deadline: true}, "", map[string]string{}, false},
		{"a rescued state", Outcome{Job: job, Op: decide.OpApply, PodFound: true, Result: &result.Document{Error: &result.RunError{Kind: infrav1.RunErrorStep}, Rescue: &result.Rescue{Serial: 12}}},
			infrav1.RunErrorStep, map[string]string{infrav1.RescuedSerialAnnotation: "12"}, false},
		{"a plan Job whose plan is unreadable", Outcome{Job: job, Op: decide.OpPlan, Succeeded: true, Result: &result.Document{}}, "",
			map[string]string{infrav1.PlanUnreadableAnnotation: "true"}, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.o.Verdict()
			if v.Kind != tc.kind || !maps.Equal(v.Marks, tc.marks) || v.NewSample != tc.newSample {
				t.Errorf("Verdict = %+v, want kind %q, marks %v, new sample %v", v, tc.kind, tc.marks, tc.newSample)
			}
			if want := tc.marks[infrav1.RescuedSerialAnnotation]; v.Rescued != want {
				t.Errorf("Rescued = %q, want %q", v.Rescued, want)
			}
		})
	}
}

// TestWhetherAFailedApplyMayHaveApplied: an apply that left no result may
// have applied, unless its image was never pulled; one whose result lists
// the apply step did; and its outcome is unknown (unconfirmed) when its
// runner started or its pod is gone.
func TestWhetherAFailedApplyMayHaveApplied(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "captf-c-prod-apply-a1-0a0b0c"}}
	unpulled := job.DeepCopy()
	unpulled.Annotations = map[string]string{infrav1.ImagePullFailedAnnotation: "true"}
	started := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	testCases := []struct {
		name                        string
		o                           Outcome
		mayHaveApplied, unconfirmed bool
	}{
		{"no result, its runner started", Outcome{Job: job, Op: decide.OpApply, PodFound: true, Started: started}, true, true},
		{"no result, its pod gone", Outcome{Job: job, Op: decide.OpApply}, true, true},
		{"no result, its pod there and never started", Outcome{Job: job, Op: decide.OpApply, PodFound: true}, true, false},
		{"its image never pulled", Outcome{Job: unpulled, Op: decide.OpApply}, false, false},
		{"the apply step ran", Outcome{Job: job, Op: decide.OpApply, PodFound: true, Result: &result.Document{Steps: []result.Step{{Name: result.StepInit}, {Name: result.StepApply, Exit: 1}}}}, true, false},
		{"it failed before the apply step", Outcome{Job: job, Op: decide.OpApply, PodFound: true, Result: &result.Document{Steps: []result.Step{{Name: result.StepInit, Exit: 1}}}}, false, false},
		{"a destroy is never unconfirmed", Outcome{Job: job, Op: decide.OpDestroy}, true, false},
		{"a success is never unconfirmed", Outcome{Job: job, Op: decide.OpApply, Succeeded: true}, true, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.o.MayHaveApplied(); got != tc.mayHaveApplied {
				t.Errorf("MayHaveApplied = %v, want %v", got, tc.mayHaveApplied)
			}
			if got := tc.o.Unconfirmed(); got != tc.unconfirmed {
				t.Errorf("Unconfirmed = %v, want %v", got, tc.unconfirmed)
			}
		})
	}
}

// TestMetricLabels: how the metrics name each way a Job ends.
func TestMetricLabels(t *testing.T) {
	failedAt := func(kind infrav1.RunErrorKind, step string) *result.Document {
		return &result.Document{Error: &result.RunError{Kind: kind, Step: step}}
	}
	for _, tc := range []struct {
		name                 string
		o                    Outcome
		kind                 infrav1.RunErrorKind
		res, errorKind, step string
	}{
		{"succeeded", Outcome{Succeeded: true, Result: &result.Document{}}, "", "succeeded", "", ""},
		{"a failed step", Outcome{Result: failedAt(infrav1.RunErrorStep, "apply")}, infrav1.RunErrorStep, "failed", "step", "apply"},
		{"its deadline", Outcome{Deadline: true, Result: failedAt(infrav1.RunErrorInterrupted, "apply")}, infrav1.RunErrorInterrupted, "deadline", "deadline", "apply"},
		{"interrupted", Outcome{Result: failedAt(infrav1.RunErrorInterrupted, "plan")}, infrav1.RunErrorInterrupted, "interrupted", "interrupted", "plan"},
		{"blocked", Outcome{Result: failedAt(infrav1.RunErrorBlocked, "plan")}, infrav1.RunErrorBlocked, "blocked", "blocked", "plan"},
		{"the plan changed", Outcome{Result: failedAt(infrav1.RunErrorPlanChanged, "plan")}, infrav1.RunErrorPlanChanged, "plan_changed", "plan-changed", "plan"},
		{"no result", Outcome{}, "", "failed", "unknown", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, errorKind, step := tc.o.MetricLabels(tc.kind)
			if res != tc.res || errorKind != tc.errorKind || step != tc.step {
				t.Errorf("MetricLabels = %q, %q, %q; want %q, %q, %q", res, errorKind, step, tc.res, tc.errorKind, tc.step)
			}
		})
	}
}

// TestBookkeptMarks: the bookkept mark carries every mark a verdict can
// give a Job, and its plan's hash, so that later passes read them of the
// Job; nothing else of it.
func TestBookkeptMarks(t *testing.T) {
	failed := func(kind infrav1.RunErrorKind) *result.Document {
		return &result.Document{Error: &result.RunError{Kind: kind}}
	}
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Annotations: map[string]string{"example.test/other": "x", infrav1.PlanHashAnnotation: "p2:abc"}}}
	for _, o := range []Outcome{
		{Job: j, Op: decide.OpApply, Result: failed(infrav1.RunErrorBlocked)},
		{Job: j, Op: decide.OpApply, Result: failed(infrav1.RunErrorPlanChanged)},
		{Job: j, Op: decide.OpApply, Result: failed(infrav1.RunErrorInterrupted)},
		{Job: j, Op: decide.OpApply, Result: &result.Document{Error: &result.RunError{Kind: infrav1.RunErrorStep}, Rescue: &result.Rescue{Serial: 7}}},
		{Job: j, Op: decide.OpPlan, Succeeded: true, Result: &result.Document{}},
	} {
		maps.Copy(j.Annotations, o.Verdict().Marks)
	}
	got := BookkeptMarks(j)
	want := map[string]string{infrav1.BookkeptAnnotation: "true", infrav1.PlanHashAnnotation: "p2:abc", infrav1.DestructivePlanBlockedAnnotation: "true",
		infrav1.PlanChangedAnnotation: "true", infrav1.InterruptedAnnotation: "true", infrav1.RescuedSerialAnnotation: "7", infrav1.PlanUnreadableAnnotation: "true"}
	if !maps.Equal(got, want) {
		t.Errorf("BookkeptMarks = %v, want %v", got, want)
	}
	marked := Marked([]batchv1.Job{*j, {ObjectMeta: metav1.ObjectMeta{Name: "other"}}}, []*batchv1.Job{j})
	if marked[0].Annotations[infrav1.BookkeptAnnotation] != "true" || marked[1].Annotations[infrav1.BookkeptAnnotation] != "" {
		t.Errorf("Marked marks %v and %v, want only the bookkept Job", marked[0].Annotations, marked[1].Annotations)
	}
	if j.Annotations[infrav1.BookkeptAnnotation] != "" {
		t.Error("Marked changed the Job it was given")
	}
}

// TestFacts: what the report of a finished Job is computed from.
func TestFacts(t *testing.T) {
	job := func(ann map[string]string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Annotations: ann}, Spec: batchv1.JobSpec{ActiveDeadlineSeconds: ptrTo[int64](3600)}}
	}
	for _, tc := range []struct {
		name string
		o    Outcome
		kind infrav1.RunErrorKind
		want func(f conditions.JobFacts) bool
	}{
		{"a succeeded apply", Outcome{Job: job(nil), Op: decide.OpApply, Succeeded: true, Result: &result.Document{}},
			"", func(f conditions.JobFacts) bool {
				return f.Succeeded && f.DeadlineSeconds == 3600 && f.Name == "j" && !f.ImagePullFailed
			}},
		{"its runner image not pulled", Outcome{Job: job(map[string]string{infrav1.ImagePullFailedAnnotation: "true", infrav1.RunnerImagePullFailedAnnotation: "true"}), Op: decide.OpApply},
			"", func(f conditions.JobFacts) bool { return f.ImagePullFailed && f.RunnerImage }},
		{"a plan Job with no plan", Outcome{Job: job(nil), Op: decide.OpPlan, Succeeded: true, Result: &result.Document{}},
			"", func(f conditions.JobFacts) bool { return f.PlanUnreadable }},
		{"a failed step", Outcome{Job: job(nil), Op: decide.OpApply, Result: &result.Document{Error: &result.RunError{Kind: infrav1.RunErrorStep, Step: "apply"}}},
			infrav1.RunErrorStep, func(f conditions.JobFacts) bool {
				return f.Kind == infrav1.RunErrorStep && f.Summary != "" && !f.Succeeded
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if f := tc.o.Facts(tc.kind); !tc.want(f) {
				t.Errorf("Facts = %+v", f)
			}
		})
	}
}
