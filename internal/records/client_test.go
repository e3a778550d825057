package records_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/envtest"
)

const kind = "TerraformMachine"

func ctrlKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

func attemptOf(job, hash string) records.Record {
	return records.Record{
		Job: job, Image: "registry.example/modules/noop:v1", Identity: "team-a", InputsHash: hash,
		MainTF: []byte(`{"module":{"role":{}}}` + job), Tfvars: []byte(`{"bootstrap_data":"` + sensitive + `"}`),
	}
}

func TestWriteAttemptCreatesThenUpdatesTheRecord(t *testing.T) {
	envtest.Require(t, env)
	ctx, ns := testContext(t), namespace(t)
	m := machine(t, ns, "web-0")
	check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf("job-a1", "h2:one")))

	s := secret(t, ns, "captf-inputs-m-web-0")
	if _, moved := s.Labels[infrav1.MoveLabel]; moved || s.Labels[infrav1.ManagedLabel] != "true" || s.Labels[infrav1.OwnerNameLabel] != "web-0" {
		t.Errorf("labels %v: want managed and owner labels, never the move label", s.Labels)
	}
	if refs := s.OwnerReferences; len(refs) != 1 || refs[0].UID != m.UID || refs[0].Controller != nil || refs[0].BlockOwnerDeletion != nil {
		t.Errorf("owner references %+v, want one plain reference to the machine", refs)
	}
	// Others annotate the attempt record too; a write keeps their keys.
	s.Annotations[infrav1.UnconfirmedApplyAnnotation] = "job-a1"
	check(t, env.Client.Update(ctx, s))

	marked, err := records.MarkMayHaveApplied(ctx, env.Client, env.Client, ns, kind, "web-0", "job-older")
	check(t, err)
	if marked {
		t.Error("MarkMayHaveApplied marked a record that names another Job")
	}
	marked, err = records.MarkMayHaveApplied(ctx, env.Client, env.Client, ns, kind, "web-0", "job-a1")
	check(t, err)
	exists, err := records.MarkApplied(ctx, env.Client, env.Client, ns, kind, "web-0")
	check(t, err)
	attempt, applied, err := records.Load(ctx, env.Client, ns, kind, "web-0")
	check(t, err)
	if !marked || !exists || applied != nil || attempt == nil || !attempt.MayHaveApplied || !attempt.Applied || attempt.InputsHash != "h2:one" {
		t.Fatalf("after marking: marked %v, exists %v, attempt %+v, applied %+v", marked, exists, attempt, applied)
	}

	// The next attempt leaves the evidence of job-a1's possible partial
	// apply alone (TestEvidenceOfAPartialApplyOutlivesLaterAttempts); once
	// an apply is confirmed, an attempt replaces the files and the
	// record's own annotations, keeping applied and the annotations it
	// does not own.
	check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf("job-a2", "h2:two")))
	attempt, _, err = records.Load(ctx, env.Client, ns, kind, "web-0")
	check(t, err)
	if attempt.Job != "job-a1" || !attempt.MayHaveApplied {
		t.Errorf("a new attempt replaced the evidence of a possible partial apply: the record names %s, may-have-applied %v", attempt.Job, attempt.MayHaveApplied)
	}
	_, err = records.ConfirmApplied(ctx, env.Client, env.Client, ns, kind, "web-0", records.Record{Job: "job-a3"}, "", nil)
	check(t, err)
	check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf("job-a4", "h2:four")))
	s = secret(t, ns, "captf-inputs-m-web-0")
	attempt, _, err = records.Load(ctx, env.Client, ns, kind, "web-0")
	check(t, err)
	if attempt.Job != "job-a4" || attempt.MayHaveApplied || !attempt.Applied || s.Annotations[infrav1.UnconfirmedApplyAnnotation] != "job-a1" ||
		!strings.HasSuffix(string(attempt.MainTF), "job-a4") {
		t.Errorf("after an attempt following a confirmed apply: %+v, annotations %v", attempt, s.Annotations)
	}
	exists, err = records.ClearMayHaveApplied(ctx, env.Client, env.Client, ns, kind, "nobody")
	check(t, err)
	if exists {
		t.Error("ClearMayHaveApplied found a record of an object that has none")
	}
}

// perRun creates the per-run Secret of job the way the manager does.
func perRun(t *testing.T, ns, job, image, hash, files string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobs.PerRunSecretName(job), Labels: map[string]string{infrav1.ManagedLabel: "true"},
			Annotations: map[string]string{infrav1.ImageAnnotation: image, infrav1.IdentityAnnotation: "local", infrav1.IdentityKindAnnotation: "Secret", infrav1.InputsHashAnnotation: hash}},
		Data: map[string][]byte{records.MainFile: []byte(files), records.TfvarsFile: []byte(`{"bootstrap_data":"` + sensitive + `"}`)},
	}
	check(t, env.Client.Create(t.Context(), s))
	return s
}

func TestPromote(t *testing.T) {
	envtest.Require(t, env)
	ctx, ns := testContext(t), namespace(t)
	m := machine(t, ns, "web-1")
	const v1, v2 = "registry.example/m:v1", "registry.example/m:v2"
	promote := func(job string, pr *corev1.Secret, digest string) records.Promotion {
		t.Helper()
		// job-a9 is the newest apply of the test: it finished after every
		// other Job, which the bookkeeping passes as newer.
		var newer []string
		if job != "job-a9" {
			newer = []string{"job-a9"}
		}
		p, err := records.Promote(ctx, env.Client, env.Client, m, kind, job, pr, digest, newer)
		check(t, err)
		return p
	}
	testCases := []struct {
		name        string
		prepare     func() (job string, pr *corev1.Secret, digest string)
		wantOutcome records.PromoteOutcome
		wantJob     string
		wantDigest  string
		wantFiles   string
	}{{
		name: "from the per-run Secret, with the pod's digest",
		prepare: func() (string, *corev1.Secret, string) {
			check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf("job-a1", "h2:one")))
			return "job-a1", perRun(t, ns, "job-a1", v1, "h2:one", "per-run-1"), "sha256:d1"
		},
		wantOutcome: records.Promoted, wantJob: "job-a1", wantDigest: "sha256:d1", wantFiles: "per-run-1",
	}, {
		name:        "again: nothing to do",
		prepare:     func() (string, *corev1.Secret, string) { return "job-a1", nil, "sha256:other" },
		wantOutcome: records.AlreadyPromoted, wantJob: "job-a1", wantDigest: "sha256:d1", wantFiles: "per-run-1",
	}, {
		name: "no digest reported, same image: the previous digest stays",
		prepare: func() (string, *corev1.Secret, string) {
			return "job-a2", perRun(t, ns, "job-a2", v1, "h2:two", "per-run-2"), ""
		},
		wantOutcome: records.Promoted, wantJob: "job-a2", wantDigest: "sha256:d1", wantFiles: "per-run-2",
	}, {
		name: "no digest reported, another image: no digest",
		prepare: func() (string, *corev1.Secret, string) {
			return "job-a3", perRun(t, ns, "job-a3", v2, "h2:three", "per-run-3"), ""
		},
		wantOutcome: records.Promoted, wantJob: "job-a3", wantDigest: "", wantFiles: "per-run-3",
	}, {
		name: "per-run Secret gone: the attempt record naming the Job",
		prepare: func() (string, *corev1.Secret, string) {
			check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf("job-a4", "h2:four")))
			return "job-a4", nil, "sha256:d4"
		},
		wantOutcome: records.PromotedFromAttempt, wantJob: "job-a4", wantDigest: "sha256:d4", wantFiles: `{"module":{"role":{}}}job-a4`,
	}, {
		name:        "per-run Secret gone and the attempt names another Job: unknown, the older record stays",
		prepare:     func() (string, *corev1.Secret, string) { return "job-a5", nil, "sha256:d5" },
		wantOutcome: records.PromotionUnknown, wantJob: "job-a4", wantDigest: "sha256:d4", wantFiles: `{"module":{"role":{}}}job-a4`,
	}, {
		name: "a newer apply finished",
		prepare: func() (string, *corev1.Secret, string) {
			return "job-a9", perRun(t, ns, "job-a9", v1, "h2:nine", "per-run-9"), "sha256:d9"
		},
		wantOutcome: records.Promoted, wantJob: "job-a9", wantDigest: "sha256:d9", wantFiles: "per-run-9",
	}, {
		name: "an older apply's success read late: the record of the newer one stays",
		prepare: func() (string, *corev1.Secret, string) {
			return "job-a8", perRun(t, ns, "job-a8", v1, "h2:eight", "per-run-8"), "sha256:d8"
		},
		wantOutcome: records.Superseded, wantJob: "job-a9", wantDigest: "sha256:d9", wantFiles: "per-run-9",
	}}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			before := secretOrNil(t, ns, "captf-applied-m-web-1")
			p := promote(tc.prepare())
			after := secret(t, ns, "captf-applied-m-web-1")
			got := records.FromSecret(after)
			if p.Outcome != tc.wantOutcome || got.Job != tc.wantJob || got.ImageDigest != tc.wantDigest || string(got.MainTF) != tc.wantFiles {
				t.Errorf("outcome %s, record job %q digest %q files %q; want %s, %q, %q, %q",
					p.Outcome, got.Job, got.ImageDigest, got.MainTF, tc.wantOutcome, tc.wantJob, tc.wantDigest, tc.wantFiles)
			}
			if p.Record == nil || p.Record.Job != tc.wantJob {
				t.Errorf("Promotion.Record = %+v, want the record of %s", p.Record, tc.wantJob)
			}
			wrote := tc.wantOutcome == records.Promoted || tc.wantOutcome == records.PromotedFromAttempt
			if !wrote && before != nil && before.ResourceVersion != after.ResourceVersion {
				t.Errorf("%s rewrote the applied record", p.Outcome)
			}
		})
	}
	if _, err := records.Promote(ctx, env.Client, env.Client, m, kind, "job-a6", perRun(t, ns, "job-other", v1, "h2:x", "x"), "", nil); err == nil {
		t.Error("Promote accepted the per-run Secret of another Job")
	}
}

func secretOrNil(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), ctrlKey(ns, name), s); apierrors.IsNotFound(err) {
		return nil
	} else {
		check(t, err)
	}
	return s
}

func TestDeleteRemovesBothRecords(t *testing.T) {
	envtest.Require(t, env)
	ctx, ns := testContext(t), namespace(t)
	name := strings.Repeat("long-name-", 24) + "x" // over 253 characters with the prefix
	m := machine(t, ns, name)
	check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf("job-a1", "h2:one")))
	_, err := records.Promote(ctx, env.Client, env.Client, m, kind, "job-a1", nil, "", nil)
	check(t, err)
	attempt, applied, err := records.Load(ctx, env.Client, ns, kind, name)
	check(t, err)
	if attempt == nil || applied == nil || len(attempt.Name) > 253 || attempt.Name != records.AttemptName(kind, name) {
		t.Fatalf("records of a long-named machine: %+v, %+v", attempt, applied)
	}
	// The garbage collector (a foreground deletion of the machine) or a
	// namespace deletion deletes the records: they stay, readable.
	for _, n := range []string{attempt.Name, applied.Name} {
		check(t, env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}}))
	}
	attempt, applied, err = records.Load(ctx, env.Client, ns, kind, name)
	check(t, err)
	if attempt == nil || applied == nil || string(attempt.Tfvars) == "" {
		t.Fatalf("after a delete that is not CAPTF's cleanup: %+v, %+v; want both records kept", attempt, applied)
	}
	if s := secret(t, ns, attempt.Name); s.DeletionTimestamp == nil || !slices.Contains(s.Finalizers, infrav1.StateProtectionFinalizer) {
		t.Errorf("attempt record: deletionTimestamp %v, finalizers %v; want it held by %s", s.DeletionTimestamp, s.Finalizers, infrav1.StateProtectionFinalizer)
	}
	check(t, records.Delete(ctx, env.Client, env.Client, ns, kind, name))
	check(t, records.Delete(ctx, env.Client, env.Client, ns, kind, name))
	attempt, applied, err = records.Load(ctx, env.Client, ns, kind, name)
	check(t, err)
	if attempt != nil || applied != nil {
		t.Errorf("after Delete: %+v, %+v", attempt, applied)
	}
}

func TestARetainedRecordIsNeverOverwritten(t *testing.T) {
	envtest.Require(t, env)
	ctx, ns := testContext(t), namespace(t)
	m := machine(t, ns, "kept")
	check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf("job-a1", "h2:one")))
	s := secret(t, ns, "captf-inputs-m-kept")
	s.Labels[infrav1.RetainedFromUIDLabel] = "old-uid"
	s.OwnerReferences = nil
	check(t, env.Client.Update(ctx, s))

	err := records.WriteAttempt(ctx, env.Client, env.Client, m, kind, attemptOf("job-a2", "h2:two"))
	if !errors.Is(err, records.ErrRetained) || !strings.Contains(err.Error(), "old-uid") {
		t.Errorf("WriteAttempt over a retained record: %v, want ErrRetained naming the UID", err)
	}
	if _, err := records.MarkApplied(ctx, env.Client, env.Client, ns, kind, "kept"); !errors.Is(err, records.ErrRetained) {
		t.Errorf("MarkApplied on a retained record: %v, want ErrRetained", err)
	}
	if got := records.FromSecret(secret(t, ns, "captf-inputs-m-kept")); got.Job != "job-a1" {
		t.Errorf("the retained record now names %s", got.Job)
	}
}

// TestPoolExportsRecords: a pool's attempt record says which cluster
// exports its last success applied, which change it holds back, and which
// change may have partly applied; a success clears what it settles.
func TestPoolExportsRecords(t *testing.T) {
	envtest.Require(t, env)
	ctx, ns := testContext(t), namespace(t)
	m := machine(t, ns, "pool")
	rec := attemptOf("job-p1", "h2:one")
	rec.Tfvars = []byte(`{"bootstrap_data":"` + sensitive + `","captf_cluster_outputs":{"network_id":"n-2"}}`)
	check(t, records.WriteAttempt(ctx, env.Client, env.Client, m, kind, rec))
	load := func() *records.Record {
		t.Helper()
		attempt, _, err := records.Load(ctx, env.Client, ns, kind, "pool")
		check(t, err)
		return attempt
	}

	// A first apply that fails changed no exports.
	_, err := records.MarkPartialExports(ctx, env.Client, env.Client, ns, kind, "pool", "job-p1")
	check(t, err)
	if a := load(); a.PartialExports != "" {
		t.Fatalf("partial-cluster-outputs %q recorded before anything was applied", a.PartialExports)
	}
	_, err = records.MarkAppliedExports(ctx, env.Client, env.Client, ns, kind, "pool", "old-exports")
	check(t, err)
	_, err = records.SetPendingExports(ctx, env.Client, env.Client, ns, kind, "pool", `{"plan":"pool-1"}`)
	check(t, err)
	_, err = records.MarkPartialExports(ctx, env.Client, env.Client, ns, kind, "pool", "job-other")
	check(t, err)
	if a := load(); a.AppliedExports != "old-exports" || a.PendingExports != `{"plan":"pool-1"}` || a.PartialExports != "" {
		t.Fatalf("record %+v: want the applied and pending exports, and no partial record for another Job", a)
	}
	// A rotation applied with the same exports keeps the held change.
	_, err = records.MarkAppliedExports(ctx, env.Client, env.Client, ns, kind, "pool", "old-exports")
	check(t, err)
	if a := load(); a.PendingExports == "" {
		t.Fatal("a success applying the same exports cleared the held change")
	}
	_, err = records.MarkPartialExports(ctx, env.Client, env.Client, ns, kind, "pool", "job-p1")
	check(t, err)
	a := load()
	if !strings.Contains(a.PartialExports, `"job":"job-p1"`) || !strings.Contains(a.PartialExports, inputs.ExportsHash(rec.Tfvars)) {
		t.Fatalf("partial-cluster-outputs %q: want Job job-p1 and the exports it rendered", a.PartialExports)
	}
	if strings.Contains(a.PartialExports, "n-2") || strings.Contains(a.PendingExports, sensitive) {
		t.Error("the exports records carry values; they must carry names and hashes only")
	}
	// The change applied: nothing is held or partly applied any more.
	_, err = records.MarkAppliedExports(ctx, env.Client, env.Client, ns, kind, "pool", inputs.ExportsHash(rec.Tfvars))
	check(t, err)
	if a := load(); a.PendingExports != "" || a.PartialExports != "" {
		t.Errorf("after the change applied: pending %q, partial %q; want both cleared", a.PendingExports, a.PartialExports)
	}
}
