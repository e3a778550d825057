package records_test

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/envtest"
)

// TestEvidenceOfAPartialApplyOutlivesLaterAttempts: once an apply failed
// after its apply step may have run, a destroy renders that Job's inputs
// until an apply is confirmed, whatever later attempts do: a create the API
// refused, a Job failing before its apply step, an older Job's outcome read
// late. A later Job that may have applied too takes the evidence over with
// its own inputs (read from its per-run Secret), or, when that is gone,
// marks the record naming it; a successful apply ends it.
func TestEvidenceOfAPartialApplyOutlivesLaterAttempts(t *testing.T) {
	envtest.Require(t, env)
	ctx, ns := testContext(t), namespace(t)
	m := machine(t, ns, "web-2")
	const name, image = "web-2", "registry.example/m:v1"
	write := func(job, hash string) {
		t.Helper()
		check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf(job, hash)))
	}
	succeed := func(job, hash, after string) {
		t.Helper()
		perRun(t, ns, job, image, hash, `{"module":{"role":{}}}`+job)
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job, Annotations: map[string]string{infrav1.AfterInterruptedApplyAnnotation: after}}}
		p, err := records.FinishApply(ctx, env.Client, env.Client, m, kind, j, "", nil, nil)
		check(t, err)
		if p.Outcome != records.Promoted || p.Record.Job != job {
			t.Fatalf("FinishApply promoted %s (%s), want %s", p.Record.Job, p.Outcome, job)
		}
	}
	mayHaveApplied := func(job, hash string, newer ...string) {
		t.Helper()
		perRun(t, ns, job, image, hash, `{"module":{"role":{}}}`+job)
		check(t, records.MarkJobMayHaveApplied(ctx, env.Client, env.Client, m, kind, job, newer))
	}
	testCases := []struct {
		name string
		do   func()
		// stateHash is the inputs hash the state carries: the newest
		// successful apply's.
		stateHash       string
		wantDestroy     string // the Job whose inputs a destroy renders
		wantMarked      bool
		wantAttempt     string // the Job the attempt record names
		wantUnconfirmed string
	}{{
		name:      "a first apply succeeded",
		do:        func() { write("job-a1", "h2:one"); succeed("job-a1", "h2:one", "") },
		stateHash: "h2:one", wantDestroy: "job-a1", wantAttempt: "job-a1",
	}, {
		name: "the next apply failed after its apply step",
		do: func() {
			write("job-a2", "h2:two")
			_, err := records.MarkMayHaveApplied(ctx, env.Client, env.Client, ns, kind, name, "job-a2")
			check(t, err)
		},
		stateHash: "h2:one", wantDestroy: "job-a2", wantMarked: true, wantAttempt: "job-a2",
	}, {
		name:      "a later attempt whose create the API refused",
		do:        func() { write("job-a3", "h2:three") },
		stateHash: "h2:one", wantDestroy: "job-a2", wantMarked: true, wantAttempt: "job-a2",
	}, {
		name:      "a later attempt that failed before its apply step",
		do:        func() { write("job-a4", "h2:four") },
		stateHash: "h2:one", wantDestroy: "job-a2", wantMarked: true, wantAttempt: "job-a2",
	}, {
		name: "a later attempt that may have applied too: its inputs take over",
		do: func() {
			write("job-a5", "h2:five")
			mayHaveApplied("job-a5", "h2:five")
			_, err := records.MarkUnconfirmedApply(ctx, env.Client, env.Client, ns, kind, name, "job-a5")
			check(t, err)
		},
		stateHash: "h2:one", wantDestroy: "job-a5", wantMarked: true, wantAttempt: "job-a5", wantUnconfirmed: "job-a5",
	}, {
		name: "an older Job's failure read late leaves the newer evidence",
		do: func() {
			mayHaveApplied("job-a2", "h2:two", "job-a3", "job-a4", "job-a5")
			_, err := records.MarkMayHaveApplied(ctx, env.Client, env.Client, ns, kind, name, "job-a2")
			check(t, err)
		},
		stateHash: "h2:one", wantDestroy: "job-a5", wantMarked: true, wantAttempt: "job-a5", wantUnconfirmed: "job-a5",
	}, {
		name: "an older success read late leaves it too",
		do: func() {
			_, err := records.ConfirmApplied(ctx, env.Client, env.Client, ns, kind, name, attemptOf("job-a1", "h2:one"), "job-a0", []string{"job-a2", "job-a3", "job-a4", "job-a5"})
			check(t, err)
		},
		stateHash: "h2:one", wantDestroy: "job-a5", wantMarked: true, wantAttempt: "job-a5", wantUnconfirmed: "job-a5",
	}, {
		name:      "an apply started after it succeeded: the evidence goes, the record names that apply",
		do:        func() { write("job-a6", "h2:six"); succeed("job-a6", "h2:six", "job-a5") },
		stateHash: "h2:six", wantDestroy: "job-a6", wantAttempt: "job-a6",
	}, {
		name:      "the next attempt is recorded again",
		do:        func() { write("job-a7", "h2:seven") },
		stateHash: "h2:six", wantDestroy: "job-a6", wantAttempt: "job-a7",
	}, {
		name: "that attempt vanished with its per-run Secret: the record naming it is marked",
		do: func() {
			check(t, records.MarkJobMayHaveApplied(ctx, env.Client, env.Client, m, kind, "job-a7", nil))
		},
		stateHash: "h2:six", wantDestroy: "job-a7", wantMarked: true, wantAttempt: "job-a7",
	}}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tc.do()
			attempt, applied, err := records.Load(ctx, env.Client, ns, kind, name)
			check(t, err)
			// Records hold tfvars: failures name Jobs, never print them.
			rec, _ := records.ForDestroy(attempt, applied, tc.stateHash)
			if rec == nil || rec.Job != tc.wantDestroy || !strings.HasSuffix(string(rec.MainTF), tc.wantDestroy) {
				got := "nothing"
				if rec != nil {
					got = rec.Name + " of " + rec.Job
				}
				t.Errorf("a destroy renders %s, want the inputs of %s", got, tc.wantDestroy)
			}
			if attempt.Job != tc.wantAttempt || !strings.HasSuffix(string(attempt.MainTF), tc.wantAttempt) ||
				attempt.MayHaveApplied != tc.wantMarked || attempt.UnconfirmedApply != tc.wantUnconfirmed {
				t.Errorf("attempt record names %s, may-have-applied %v, unconfirmed %q; want %s, %v, %q",
					attempt.Job, attempt.MayHaveApplied, attempt.UnconfirmedApply, tc.wantAttempt, tc.wantMarked, tc.wantUnconfirmed)
			}
		})
	}
}

// TestMarkPossiblyApplied: an apply of unknown outcome is marked as
// possibly applied and named the unconfirmed apply; one that failed after
// its apply step is only marked.
func TestMarkPossiblyApplied(t *testing.T) {
	envtest.Require(t, env)
	ctx, ns := testContext(t), namespace(t)
	for _, tc := range []struct {
		name        string
		unconfirmed bool
	}{{"failed after its apply step", false}, {"outcome unknown", true}} {
		t.Run(tc.name, func(t *testing.T) {
			name := "web-" + strings.ReplaceAll(tc.name, " ", "-")
			m := machine(t, ns, name)
			check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf("job-1", "h2:one")))
			check(t, records.MarkPossiblyApplied(ctx, env.Client, env.Client, m, kind, "job-1", nil, tc.unconfirmed, false))
			attempt, _, err := records.Load(ctx, env.Client, ns, kind, name)
			check(t, err)
			want := ""
			if tc.unconfirmed {
				want = "job-1"
			}
			if !attempt.MayHaveApplied || attempt.UnconfirmedApply != want {
				t.Errorf("may-have-applied %v, unconfirmed %q; want true, %q", attempt.MayHaveApplied, attempt.UnconfirmedApply, want)
			}
		})
	}
}
