package jobs

import (
	"slices"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/runner/result"
)

// job is a finished (or running, when ok is nil) bookkept Job of op,
// finished minutes ago.
func job(op decide.Operation, attempt int, ok *bool, minutesAgo int) batchv1.Job {
	j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Name:        string(op) + "-a" + strconv.Itoa(attempt),
		Labels:      map[string]string{infrav1.OperationLabel: string(op), infrav1.AttemptLabel: strconv.Itoa(attempt)},
		Annotations: map[string]string{infrav1.BookkeptAnnotation: "true"},
	}}
	if ok != nil {
		typ := batchv1.JobFailed
		if *ok {
			typ = batchv1.JobComplete
		}
		j.Status.Conditions = []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(t0.Add(-time.Duration(minutesAgo) * time.Minute))}}
	}
	return j
}

var yes, no = ptrTo(true), ptrTo(false)

func ptrTo[T any](v T) *T { return &v }

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func names(jobs []*batchv1.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	slices.Sort(out)
	return out
}

func TestPrunable(t *testing.T) {
	testCases := []struct {
		name       string
		jobs       []batchv1.Job
		keep, fail int
		want       []string
	}{
		{"within the limits", []batchv1.Job{job(decide.OpApply, 1, yes, 3), job(decide.OpApply, 2, no, 2)}, 3, 3, nil},
		{"oldest successes beyond the limit", []batchv1.Job{
			job(decide.OpApply, 1, yes, 4), job(decide.OpApply, 2, yes, 3), job(decide.OpApply, 3, yes, 2), job(decide.OpApply, 4, yes, 1),
		}, 2, 3, []string{"apply-a1", "apply-a2"}},
		{"limit 0 still keeps the newest success", []batchv1.Job{job(decide.OpApply, 1, yes, 2), job(decide.OpApply, 2, yes, 1)}, 0, 0, []string{"apply-a1"}},
		{"limit 0 keeps the newest failure while no newer success", []batchv1.Job{job(decide.OpApply, 1, yes, 3), job(decide.OpApply, 2, no, 2), job(decide.OpApply, 3, no, 1)}, 3, 0,
			[]string{"apply-a2"}},
		{"limit 0 drops failures older than a success", []batchv1.Job{job(decide.OpApply, 1, no, 3), job(decide.OpApply, 2, yes, 1)}, 3, 0, []string{"apply-a1"}},
		{"per operation: refreshes never evict applies", []batchv1.Job{
			job(decide.OpApply, 1, yes, 9), job(decide.OpRefresh, 1, yes, 4), job(decide.OpRefresh, 2, yes, 3), job(decide.OpRefresh, 3, yes, 2),
		}, 1, 1, []string{"refresh-a1", "refresh-a2"}},
		{"running Jobs are never pruned", []batchv1.Job{job(decide.OpApply, 1, yes, 2), job(decide.OpApply, 2, yes, 1), job(decide.OpApply, 3, nil, 0)}, 1, 1, []string{"apply-a1"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(Prunable(tc.jobs, tc.keep, tc.fail)); !slices.Equal(got, tc.want) {
				t.Errorf("prunable = %v, want %v", got, tc.want)
			}
		})
	}
	// Plan Jobs that succeeded without a readable plan are kept as
	// failures (their backoff counts them), not as successes.
	unreadable := func(attempt, ago int) batchv1.Job {
		j := job(decide.OpPlan, attempt, yes, ago)
		j.Annotations[infrav1.PlanUnreadableAnnotation] = "true"
		return j
	}
	if got := names(Prunable([]batchv1.Job{unreadable(1, 3), unreadable(2, 2), unreadable(3, 1)}, 1, 3)); len(got) != 0 {
		t.Errorf("unreadable plans pruned as successes beyond the limit: %v", got)
	}
	notBookkept := job(decide.OpApply, 1, yes, 5)
	notBookkept.Annotations = nil
	if got := Prunable([]batchv1.Job{notBookkept, job(decide.OpApply, 2, yes, 2), job(decide.OpApply, 3, yes, 1)}, 1, 1); len(got) != 1 || got[0].Name != "apply-a2" {
		t.Errorf("a Job not bookkept yet was pruned or the wrong one: %v", names(got))
	}
}

func TestNextAttempt(t *testing.T) {
	jobs := []batchv1.Job{job(decide.OpApply, 1, yes, 3), job(decide.OpApply, 4, no, 2), job(decide.OpDestroy, 1, no, 1)}
	if got := NextAttempt(jobs, decide.OpApply); got != 5 {
		t.Errorf("next apply attempt = %d, want 5 (one more than the newest retained)", got)
	}
	if got := NextAttempt(jobs, decide.OpRefresh); got != 1 {
		t.Errorf("next refresh attempt = %d, want 1", got)
	}
}

func TestFinishedJobReadsTheBookkeepingMarks(t *testing.T) {
	j := job(decide.OpApply, 1, no, 1)
	j.Annotations[infrav1.InterruptedAnnotation] = "true"
	j.Annotations[infrav1.InputsHashAnnotation] = "h2:x"
	fj, ok := Summary(&j)
	if !ok || !fj.Interrupted || fj.CountsAsFailure() || fj.InputsHash != "h2:x" {
		t.Errorf("finishedJob = %+v, %v; want an interrupted apply of h2:x that is no failure", fj, ok)
	}
	running := job(decide.OpApply, 2, nil, 0)
	if _, ok := Summary(&running); ok {
		t.Error("a running Job reads as finished")
	}
}

// TestToBookkeepOldestFinishedFirst: after a manager outage several
// finished Jobs wait for bookkeeping, listed by the cache in no useful
// order; they are read oldest-finished first, so that the newest outcome
// is the one the records and the status end with.
func TestToBookkeepOldestFinishedFirst(t *testing.T) {
	pending := func(j batchv1.Job) batchv1.Job {
		delete(j.Annotations, infrav1.BookkeptAnnotation)
		return j
	}
	created := func(j batchv1.Job, minutesAgo int) batchv1.Job {
		j.CreationTimestamp = metav1.NewTime(t0.Add(-time.Duration(minutesAgo) * time.Minute))
		return j
	}
	testCases := []struct {
		name string
		jobs []batchv1.Job
		want []string
	}{
		{"the cache lists the newest first", []batchv1.Job{pending(job(decide.OpApply, 2, yes, 1)), pending(job(decide.OpApply, 1, no, 3))},
			[]string{"apply-a1", "apply-a2"}},
		{"three applies in no order", []batchv1.Job{pending(job(decide.OpApply, 2, no, 4)), pending(job(decide.OpApply, 3, yes, 2)), pending(job(decide.OpApply, 1, no, 6))},
			[]string{"apply-a1", "apply-a2", "apply-a3"}},
		{"finished in the same second: the lower attempt first", []batchv1.Job{pending(job(decide.OpApply, 3, yes, 2)), pending(job(decide.OpApply, 2, no, 2))},
			[]string{"apply-a2", "apply-a3"}},
		{"same second, other operations: the older creation first", []batchv1.Job{
			created(pending(job(decide.OpRefresh, 1, yes, 2)), 3), created(pending(job(decide.OpApply, 4, yes, 2)), 9),
		}, []string{"apply-a4", "refresh-a1"}},
		{"bookkept and running Jobs are not read", []batchv1.Job{job(decide.OpApply, 1, yes, 5), pending(job(decide.OpApply, 3, nil, 0)), pending(job(decide.OpApply, 2, no, 1))},
			[]string{"apply-a2"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, j := range ToBookkeep(tc.jobs) {
				got = append(got, j.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("bookkeeping order %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAppliesAfter: the applies that finished after a Job are what a late
// read of its outcome must not undo.
func TestAppliesAfter(t *testing.T) {
	all := []batchv1.Job{
		job(decide.OpApply, 1, yes, 5), job(decide.OpApply, 2, no, 4), job(decide.OpRefresh, 1, yes, 3), job(decide.OpApply, 3, yes, 2), job(decide.OpApply, 4, nil, 0),
	}
	testCases := []struct {
		name      string
		of        int // index in all
		succeeded bool
		want      []string
	}{
		{"every apply after the first", 0, false, []string{"apply-a2", "apply-a3"}},
		{"the successful ones after the first", 0, true, []string{"apply-a3"}},
		{"a newer success settles a failure", 1, true, []string{"apply-a3"}},
		{"nothing after the newest finished apply; the running one does not count", 3, false, nil},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := AppliesAfter(all, &all[tc.of], tc.succeeded); !slices.Equal(got, tc.want) {
				t.Errorf("AppliesAfter(%s) = %v, want %v", all[tc.of].Name, got, tc.want)
			}
		})
	}
}

// TestRescuedSerial: the rescued serial is the newest finished apply's,
// none when that apply rescued nothing (an older rescue was restored and
// applied after), and other operations' Jobs do not count.
func TestRescuedSerial(t *testing.T) {
	rescued := func(j batchv1.Job, serial string) batchv1.Job {
		j.Annotations[infrav1.RescuedSerialAnnotation] = serial
		return j
	}
	for _, tc := range []struct {
		name string
		all  []batchv1.Job
		want string
	}{
		{"no Job", nil, ""},
		{"the newest apply rescued its state", []batchv1.Job{job(decide.OpApply, 1, ptrTo(true), 9), rescued(job(decide.OpApply, 2, ptrTo(false), 3), "7")}, "7"},
		{"the newest apply, listed first, rescued its state", []batchv1.Job{rescued(job(decide.OpApply, 2, ptrTo(false), 3), "7"), job(decide.OpApply, 1, ptrTo(true), 9)}, "7"},
		{"an apply after the rescue", []batchv1.Job{rescued(job(decide.OpApply, 1, ptrTo(false), 9), "7"), job(decide.OpApply, 2, ptrTo(true), 3)}, ""},
		{"a refresh after the rescue does not count", []batchv1.Job{rescued(job(decide.OpApply, 1, ptrTo(false), 9), "7"), job(decide.OpRefresh, 1, ptrTo(true), 3)}, "7"},
		{"a running apply does not count", []batchv1.Job{rescued(job(decide.OpApply, 1, ptrTo(false), 9), "7"), job(decide.OpApply, 2, nil, 1)}, "7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RescuedSerial(tc.all); got != tc.want {
				t.Errorf("RescuedSerial = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNewestFinished: the Job that finished last names the live report's
// last Job; a tie goes to the greater name; running Jobs do not count.
func TestNewestFinished(t *testing.T) {
	a1, a2 := job(decide.OpApply, 1, yes, 9), job(decide.OpApply, 2, no, 3)
	r1 := job(decide.OpRefresh, 1, yes, 3)
	for _, tc := range []struct {
		name string
		all  []batchv1.Job
		want string
	}{
		{"none", nil, ""},
		{"the newest", []batchv1.Job{a2, a1}, a2.Name},
		{"a tie: the greater name", []batchv1.Job{a2, r1}, r1.Name},
		{"a tie, listed the other way", []batchv1.Job{r1, a2}, r1.Name},
		{"a running Job does not count", []batchv1.Job{a1, job(decide.OpApply, 3, nil, 0)}, a1.Name},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewestFinished(tc.all); got != tc.want {
				t.Errorf("NewestFinished = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEvidence: a failed apply leaves on the attempt record that its
// outcome is unknown (no result, its runner started or its pod gone),
// that it may have applied (its apply step ran, or no result), both, or
// nothing: not when its plan stopped it, nor once a newer apply
// succeeded; the applies after it are named.
func TestEvidence(t *testing.T) {
	failed := job(decide.OpApply, 1, no, 5)
	newerFailed, newerSucceeded := job(decide.OpApply, 2, no, 3), job(decide.OpApply, 3, yes, 1)
	stepped := &result.Document{Steps: []result.Step{{Name: result.StepInit}, {Name: result.StepApply}}}
	planned := &result.Document{Steps: []result.Step{{Name: result.StepInit}, {Name: result.StepPlan}}}
	started := t0.Add(-6 * time.Minute)
	testCases := []struct {
		name string
		o    Outcome
		kind infrav1.RunErrorKind
		all  []batchv1.Job
		want Evidence
	}{
		{"no result, its runner started", Outcome{Op: decide.OpApply, Started: started, PodFound: true}, infrav1.RunErrorInterrupted, []batchv1.Job{failed, newerFailed},
			Evidence{Unconfirmed: true, Possibly: true, Newer: []string{"apply-a2"}}},
		{"no result, its pod gone", Outcome{Op: decide.OpApply}, "", []batchv1.Job{failed}, Evidence{Unconfirmed: true, Possibly: true}},
		{"failed in its apply step", Outcome{Op: decide.OpApply, Result: stepped, PodFound: true}, infrav1.RunErrorStep, []batchv1.Job{failed}, Evidence{Possibly: true}},
		{"failed before its apply step", Outcome{Op: decide.OpApply, Result: planned, PodFound: true}, infrav1.RunErrorStep, []batchv1.Job{failed}, Evidence{}},
		{"stopped by a destructive plan", Outcome{Op: decide.OpApply, Result: stepped, PodFound: true}, infrav1.RunErrorBlocked, []batchv1.Job{failed}, Evidence{}},
		{"stopped by a changed plan", Outcome{Op: decide.OpApply, Result: stepped, PodFound: true}, infrav1.RunErrorPlanChanged, []batchv1.Job{failed}, Evidence{}},
		{"a newer apply succeeded", Outcome{Op: decide.OpApply, Started: started, PodFound: true}, "", []batchv1.Job{failed, newerSucceeded}, Evidence{}},
		{"it succeeded", Outcome{Op: decide.OpApply, Succeeded: true}, "", []batchv1.Job{failed}, Evidence{}},
		{"a refresh", Outcome{Op: decide.OpRefresh, Started: started}, "", []batchv1.Job{failed}, Evidence{}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Job = &failed
			got := tc.o.Evidence(tc.all, tc.kind)
			if got.Unconfirmed != tc.want.Unconfirmed || got.Possibly != tc.want.Possibly || !slices.Equal(got.Newer, tc.want.Newer) {
				t.Errorf("Evidence = %+v, want %+v", got, tc.want)
			}
		})
	}
}
