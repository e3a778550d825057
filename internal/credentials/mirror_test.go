package credentials_test

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/test/envtest"
)

func getMirror(t *testing.T, ns, identity string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: credentials.MirrorName(identity)}, s); err != nil {
		t.Fatalf("reading the mirror: %v", err)
	}
	return s
}

func ensure(t *testing.T, id *infrav1.TerraformClusterIdentity, user client.Object, want credentials.Outcome) credentials.Result {
	t.Helper()
	res, err := credentials.EnsureMirror(testContext(t), env.Client, env.Client, id, user)
	record(res, err)
	if err != nil {
		t.Fatalf("EnsureMirror: %v", err)
	}
	if res.Outcome != want {
		t.Fatalf("EnsureMirror outcome = %s, want %s (%+v)", res.Outcome, want, res)
	}
	record(credentials.IdentityAllowedCondition(credentials.Check{IdentityName: id.Name, IdentityFound: true, Allowed: true, Mirror: res}),
		credentials.CredentialsMirroredCondition(credentials.Check{IdentityName: id.Name, IdentityFound: true, Allowed: true, Mirror: res}))
	return res
}

func ownerUIDs(s *corev1.Secret) map[string]string {
	out := map[string]string{}
	for _, r := range s.OwnerReferences {
		if r.Controller != nil || r.BlockOwnerDeletion != nil {
			out[r.Name] = "controller-or-blocking"
			continue
		}
		out[r.Name] = string(r.UID)
	}
	return out
}

func TestEnsureMirrorLifecycle(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	tenant, src, id := lend(t, "lifecycle", "aws-creds")
	first := cluster(t, tenant, "first", id.Name)

	ensure(t, id, first, credentials.OutcomeCreated)
	m := getMirror(t, tenant, id.Name)
	if m.Type != corev1.SecretTypeOpaque || !maps.EqualFunc(m.Data, src.Data, bytes.Equal) {
		t.Fatalf("the mirror is not an Opaque copy of the source: type %s, keys %v", m.Type, slicesKeys(m.Data))
	}
	if m.Labels[infrav1.MirroredLabel] != "true" || m.Labels[infrav1.ManagedLabel] != "true" {
		t.Errorf("mirror labels = %v; want %s=true and %s=true", m.Labels, infrav1.MirroredLabel, infrav1.ManagedLabel)
	}
	if m.Annotations[infrav1.IdentityAnnotation] != id.Name || m.Annotations[infrav1.SourceHashAnnotation] != credentials.SourceHash(src.Data) {
		t.Errorf("mirror annotations = %v; want the identity name and the source hash", m.Annotations)
	}
	if got := ownerUIDs(m); len(got) != 1 || got["first"] != string(first.UID) {
		t.Fatalf("mirror owners = %v; want one non-controller, non-blocking reference to the first cluster", got)
	}

	t.Run("a second call with the same data writes nothing", func(t *testing.T) {
		ensure(t, id, first, credentials.OutcomeUnchanged)
		if again := getMirror(t, tenant, id.Name); again.ResourceVersion != m.ResourceVersion {
			t.Fatalf("resourceVersion moved from %s to %s on a no-op", m.ResourceVersion, again.ResourceVersion)
		}
	})

	t.Run("a rotated source reaches the mirror on the next call", func(t *testing.T) {
		src.Data["AWS_SECRET_ACCESS_KEY"] = []byte("rotated-" + credValue)
		if err := env.Client.Update(ctx, src); err != nil {
			t.Fatal(err)
		}
		res := ensure(t, id, first, credentials.OutcomeUpdated)
		if !res.DataRewritten {
			t.Fatal("the rotation did not rewrite the data")
		}
		rotated := getMirror(t, tenant, id.Name)
		if string(rotated.Data["AWS_SECRET_ACCESS_KEY"]) != "rotated-"+credValue ||
			rotated.Annotations[infrav1.SourceHashAnnotation] != credentials.SourceHash(src.Data) ||
			rotated.Annotations[infrav1.SourceHashAnnotation] == m.Annotations[infrav1.SourceHashAnnotation] {
			t.Fatal("the mirror does not carry the rotated data under a new source hash")
		}
	})

	second := cluster(t, tenant, "second", id.Name)
	t.Run("a second user adds a second owner reference", func(t *testing.T) {
		res := ensure(t, id, second, credentials.OutcomeUpdated)
		if res.DataRewritten {
			t.Error("adding an owner rewrote the data")
		}
		if got := ownerUIDs(getMirror(t, tenant, id.Name)); len(got) != 2 || got["first"] != string(first.UID) || got["second"] != string(second.UID) {
			t.Fatalf("mirror owners = %v; want both clusters", got)
		}
	})

	t.Run("a user recreated with a new UID replaces its old reference", func(t *testing.T) {
		if err := env.Client.Delete(ctx, second); err != nil {
			t.Fatal(err)
		}
		waitGone(t, second)
		oldUID := second.UID
		second = cluster(t, tenant, "second", id.Name)
		ensure(t, id, second, credentials.OutcomeUpdated)
		got := getMirror(t, tenant, id.Name)
		n := 0
		for _, r := range got.OwnerReferences {
			if r.Name == "second" {
				n++
				if r.UID != second.UID || r.UID == oldUID {
					t.Fatalf("the reference to the recreated cluster has UID %s; want the new UID %s", r.UID, second.UID)
				}
			}
		}
		if n != 1 || len(got.OwnerReferences) != 2 {
			t.Fatalf("mirror owners = %v; want one reference per cluster", ownerUIDs(got))
		}
	})

	t.Run("releasing one user keeps the mirror for the other", func(t *testing.T) {
		res, err := credentials.ReleaseMirror(ctx, env.Client, tenant, id.Name, first)
		record(res, err)
		if err != nil || res.Outcome != credentials.OutcomeReleased {
			t.Fatalf("ReleaseMirror = %+v, %v; want Released", res, err)
		}
		if got := ownerUIDs(getMirror(t, tenant, id.Name)); len(got) != 1 || got["second"] != string(second.UID) {
			t.Fatalf("mirror owners = %v; want only the second cluster", got)
		}
	})

	t.Run("releasing the last user deletes the mirror", func(t *testing.T) {
		res, err := credentials.ReleaseMirror(ctx, env.Client, tenant, id.Name, second)
		record(res, err)
		if err != nil || res.Outcome != credentials.OutcomeRemoved {
			t.Fatalf("ReleaseMirror = %+v, %v; want Removed", res, err)
		}
		if reason, _, ok := res.Event(); !ok || reason != credentials.MirrorRemovedEvent {
			t.Errorf("the removal yields event %q, want %s", reason, credentials.MirrorRemovedEvent)
		}
		mirrorGone(t, tenant, id.Name)
		res, err = credentials.ReleaseMirror(ctx, env.Client, tenant, id.Name, second)
		if err != nil || res.Outcome != credentials.OutcomeAbsent {
			t.Fatalf("releasing again = %+v, %v; want Absent", res, err)
		}
	})
}

func TestRevokeMirrorDeletesWhateverTheOwners(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	tenant, _, id := lend(t, "revoke", "aws-creds")
	ensure(t, id, cluster(t, tenant, "a", id.Name), credentials.OutcomeCreated)
	ensure(t, id, cluster(t, tenant, "b", id.Name), credentials.OutcomeUpdated)

	res, err := credentials.RevokeMirror(ctx, env.Client, tenant, id.Name)
	record(res, err)
	if err != nil || res.Outcome != credentials.OutcomeRemoved {
		t.Fatalf("RevokeMirror = %+v, %v; want Removed", res, err)
	}
	mirrorGone(t, tenant, id.Name)
}

func TestSourceProblems(t *testing.T) {
	envtest.Require(t, env)
	system := namespace(t, "system", nil)
	tenant := namespace(t, "tenant", nil)
	user := cluster(t, tenant, "user", "source")

	missing := identity("source", system, "not-there", &infrav1.AllowedNamespaces{List: []string{tenant}})
	ensure(t, missing, user, credentials.OutcomeSourceNotFound)

	src := sourceSecret(t, system, "partial", map[string][]byte{"AWS_ACCESS_KEY_ID": []byte(credValue), "EMPTY": {}})
	incomplete := identity("source", system, src.Name, &infrav1.AllowedNamespaces{List: []string{tenant}})
	incomplete.Spec.RequiredKeys = []string{"AWS_SECRET_ACCESS_KEY", "EMPTY", "AWS_REGION"}
	res := ensure(t, incomplete, user, credentials.OutcomeSourceIncomplete)
	if strings.Join(res.MissingKeys, ",") != "AWS_REGION,AWS_SECRET_ACCESS_KEY" {
		t.Fatalf("missing keys = %v; want AWS_REGION and AWS_SECRET_ACCESS_KEY (an empty value counts as present)", res.MissingKeys)
	}
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: tenant, Name: credentials.MirrorName("source")}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("a mirror was written for an incomplete source (get: %v)", err)
	}
}

func TestForeignSecretIsNeverModified(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	system := namespace(t, "system", nil)
	tenant := namespace(t, "tenant", nil)
	src := sourceSecret(t, system, "aws-creds", credentialData())
	testCases := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		says        string
	}{
		{"no mirrored label", nil, nil, "lacks the label captf.io/mirrored=true"},
		{"mirror of another identity", map[string]string{infrav1.MirroredLabel: "true"}, map[string]string{infrav1.IdentityAnnotation: "someone-else"}, `names identity "someone-else"`},
	}
	for i, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			idName := []string{"foreign-a", "foreign-b"}[i]
			foreign := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: credentials.MirrorName(idName), Labels: tc.labels, Annotations: tc.annotations},
				StringData: map[string]string{"mine": "operator data"},
			}
			if err := env.Client.Create(ctx, foreign); err != nil {
				t.Fatal(err)
			}
			id := identity(idName, system, src.Name, &infrav1.AllowedNamespaces{List: []string{tenant}})
			user := cluster(t, tenant, idName, idName)
			res := ensure(t, id, user, credentials.OutcomeConflict)
			cond := credentials.CredentialsMirroredCondition(credentials.Check{IdentityName: idName, IdentityFound: true, Allowed: true, Mirror: res})
			if cond.Reason != infrav1.MirrorFailedReason || !strings.Contains(cond.Message, tenant+"/"+foreign.Name) ||
				!strings.Contains(cond.Message, "rename or remove it") || !strings.Contains(cond.Message, tc.says) {
				t.Errorf("CredentialsMirrored = %s/%s %q; want MirrorFailed naming the Secret, why, and to rename or remove it", cond.Status, cond.Reason, cond.Message)
			}
			for _, op := range []func() (credentials.Result, error){
				func() (credentials.Result, error) {
					return credentials.ReleaseMirror(ctx, env.Client, tenant, idName, user)
				},
				func() (credentials.Result, error) { return credentials.RevokeMirror(ctx, env.Client, tenant, idName) },
			} {
				if res, err := op(); err != nil || res.Outcome != credentials.OutcomeConflict {
					t.Errorf("release/revoke of a foreign Secret = %+v, %v; want Conflict", res, err)
				}
			}
			after := getMirror(t, tenant, idName)
			if after.ResourceVersion != foreign.ResourceVersion || string(after.Data["mine"]) != "operator data" || len(after.Data) != 1 || len(after.OwnerReferences) != 0 {
				t.Fatalf("the foreign Secret changed: resourceVersion %s -> %s, keys %v", foreign.ResourceVersion, after.ResourceVersion, slicesKeys(after.Data))
			}
		})
	}
}

func slicesKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// TestCheckMirrorWritesNothing: CheckMirror and CheckRevoke say what
// EnsureMirror and RevokeMirror would do (a mirror to create, one already
// current, one whose source changed, one to delete) and write nothing.
func TestCheckMirrorWritesNothing(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	tenant, src, id := lend(t, "check", "check-creds")
	user := cluster(t, tenant, "user", id.Name)
	check := func(want credentials.Outcome) {
		t.Helper()
		res, err := credentials.CheckMirror(ctx, env.Client, env.Client, id, user)
		if err != nil || res.Outcome != want {
			t.Fatalf("CheckMirror = %s, %v; want %s", res.Outcome, err, want)
		}
	}
	mirrorName := client.ObjectKey{Namespace: tenant, Name: credentials.MirrorName(id.Name)}

	check(credentials.OutcomeCreated)
	if err := env.Client.Get(ctx, mirrorName, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("CheckMirror created the mirror (get: %v)", err)
	}
	if res, err := credentials.CheckRevoke(ctx, env.Client, tenant, id.Name); err != nil || res.Outcome != credentials.OutcomeAbsent {
		t.Fatalf("CheckRevoke without a mirror = %s, %v; want Absent", res.Outcome, err)
	}
	ensure(t, id, user, credentials.OutcomeCreated)
	check(credentials.OutcomeUnchanged)

	src.Data["AWS_SECRET_ACCESS_KEY"] = []byte("rotated-" + credValue)
	if err := env.Client.Update(ctx, src); err != nil {
		t.Fatal(err)
	}
	before := getMirror(t, tenant, id.Name)
	check(credentials.OutcomeUpdated)
	if after := getMirror(t, tenant, id.Name); after.ResourceVersion != before.ResourceVersion {
		t.Fatal("CheckMirror rewrote the mirror after the source changed")
	}
	ensure(t, id, user, credentials.OutcomeUpdated)
	check(credentials.OutcomeUnchanged)

	if res, err := credentials.CheckRevoke(ctx, env.Client, tenant, id.Name); err != nil || res.Outcome != credentials.OutcomeRemoved {
		t.Fatalf("CheckRevoke with a mirror = %s, %v; want Removed (to do)", res.Outcome, err)
	}
	if err := env.Client.Get(ctx, mirrorName, &corev1.Secret{}); err != nil {
		t.Fatalf("CheckRevoke deleted the mirror (get: %v)", err)
	}
}
