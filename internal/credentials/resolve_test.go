package credentials_test

import (
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

// TestResolve: what an object's credentials are, as a pass reads them,
// writing nothing: a local Secret is delivered as it is once it exists;
// an identity that is missing is not ready; one that allows the
// namespace is ready with its mirror due, which is what the Job gets once
// written; an identity that stops
// allowing the namespace has its mirror due for deletion. Write does what
// is due, once, and says what it did.
func TestResolve(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	resolve := func(user *infrav1.TerraformCluster, ref *infrav1.IdentityReference) credentials.Resolved {
		t.Helper()
		r, err := credentials.Resolve(ctx, env.Client, env.Client, user, ref)
		if err != nil {
			t.Fatal(err)
		}
		record(r.Conditions)
		return r
	}
	tenant, _, id := lend(t, "resolve", "resolve-creds")
	user := cluster(t, tenant, "user", id.Name)

	local := &infrav1.IdentityReference{Kind: infrav1.IdentityKindSecret, Name: "local-creds"}
	if r := resolve(user, local); r.Ready || r.Identity != "local-creds" || r.Kind != infrav1.IdentityKindSecret || len(r.Conditions) == 0 {
		t.Errorf("a missing local Secret resolved to %+v, want not ready, named, with its conditions", r)
	}
	sourceSecret(t, tenant, "local-creds", credentialData())
	if r := resolve(user, local); !r.Ready || r.Secret != "local-creds" || r.MirrorDue() {
		t.Errorf("a local Secret resolved to ready %v, Secret %q, mirror due %v; want it delivered as it is", r.Ready, r.Secret, r.MirrorDue())
	}

	ref := &infrav1.IdentityReference{Name: id.Name}
	if r := resolve(user, ref); r.Ready || r.Source != nil || r.MirrorDue() || r.RevokeDue() {
		t.Errorf("a missing identity resolved to ready %v, found %v, mirror due %v, revoke due %v; want none", r.Ready, r.Source != nil, r.MirrorDue(), r.RevokeDue())
	}
	if err := env.Client.Create(ctx, id); err != nil {
		t.Fatal(err)
	}
	// A reference without a kind (as input records made before kinds were
	// recorded name theirs) is a TerraformClusterIdentity.
	r := resolve(user, ref)
	if !r.Ready || r.Kind != infrav1.IdentityKindTerraformClusterIdentity || r.Secret != credentials.MirrorName(id.Name) || !r.MirrorDue() || r.RevokeDue() {
		t.Fatalf("an identity allowing the namespace, before its mirror: ready %v, kind %q, Secret %q, mirror due %v, revoke due %v; want a TerraformClusterIdentity, ready once the mirror due is written",
			r.Ready, r.Kind, r.Secret, r.MirrorDue(), r.RevokeDue())
	}
	if rewrote, reason, _, err := r.Write(ctx, env.Client, env.Client, user); err != nil || !rewrote || reason != credentials.MirrorCreatedEvent {
		t.Fatalf("Write = %v, %q, %v; want the mirror created and the credentials concluded again", rewrote, reason, err)
	}
	if r.MirrorDue() || !r.Ready {
		t.Errorf("once written: mirror due %v, ready %v; want ready with nothing due", r.MirrorDue(), r.Ready)
	}
	if r := resolve(user, ref); !r.Ready || r.Secret != credentials.MirrorName(id.Name) || r.MirrorDue() {
		t.Errorf("after the mirror's write: ready %v, Secret %q, mirror due %v; want the mirror delivered", r.Ready, r.Secret, r.MirrorDue())
	}

	id.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{List: []string{"elsewhere"}}
	if err := env.Client.Update(ctx, id); err != nil {
		t.Fatal(err)
	}
	r = resolve(user, ref)
	if r.Ready || !r.RevokeDue() || r.MirrorDue() {
		t.Errorf("an identity that no longer allows the namespace: ready %v, revoke due %v, mirror due %v; want the mirror's deletion due", r.Ready, r.RevokeDue(), r.MirrorDue())
	}
	for _, c := range r.Conditions {
		if c.Type == infrav1.IdentityAllowedCondition && c.Status != metav1.ConditionFalse {
			t.Errorf("IdentityAllowed is %s, want False", c.Status)
		}
	}
	if rewrote, reason, note, err := r.Write(ctx, env.Client, env.Client, user); err != nil || rewrote || reason != credentials.MirrorRemovedEvent || !strings.Contains(note, tenant) {
		t.Fatalf("Write = %v, %q (%q), %v; want the mirror deleted, naming the namespace", rewrote, reason, note, err)
	}
	if r.RevokeDue() || !getMirrorGone(t, tenant, id.Name) {
		t.Error("the deletion is due again once done, or the mirror is still there")
	}
}

// getMirrorGone: the identity's mirror in ns is gone.
func getMirrorGone(t *testing.T, ns, identity string) bool {
	t.Helper()
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: credentials.MirrorName(identity)}, &corev1.Secret{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}
