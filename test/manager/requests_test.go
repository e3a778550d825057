package manager_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
)

// managerRequests records the running manager's requests to the API
// server, for tests of what it reads.
var managerRequests requestLog

type requestLog struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r)
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// count returns how many recorded requests match.
func (l *requestLog) count(match func(*http.Request) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		if match(r) {
			n++
		}
	}
	return n
}

// TestIdentityPassesListMirrorsFromTheCache: each pass of the identity
// controller lists the credentials mirrors of every namespace. It reads
// them from the manager's cache, which watches them, never from the API
// server: in a fleet, that list holds a Secret per namespace that uses the
// identity, and every mirror change brings a pass.
func TestIdentityPassesListMirrorsFromTheCache(t *testing.T) {
	startManager(t)
	ctx := t.Context()
	// A list of every namespace's Secrets by a client; the mirror
	// informer's lists and watches (a resourceVersion, or watch=true) are
	// not passes' reads.
	everySecret := func(r *http.Request) bool {
		q := r.URL.Query()
		return r.Method == http.MethodGet && r.URL.Path == "/api/v1/secrets" && q.Get("watch") != "true" && !q.Has("resourceVersion")
	}
	id := &infrav1.TerraformClusterIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: "listed-from-cache"},
		Spec: infrav1.TerraformClusterIdentitySpec{
			SecretRef:         infrav1.SecretReference{Namespace: managerNamespace, Name: "listed-from-cache"},
			AllowedNamespaces: &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{}},
		},
	}
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: id.Spec.SecretRef.Name}, StringData: map[string]string{"TOKEN": "x"}}
	for _, o := range []client.Object{source, id} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitIdentity(t, id, func(id *infrav1.TerraformClusterIdentity) bool {
		c := meta.FindStatusCondition(id.Status.Conditions, infrav1.ReadyCondition)
		return c != nil && c.Status == metav1.ConditionTrue
	})
	before := managerRequests.count(everySecret)

	// Three namespaces start using it, one after the other: three mirror
	// changes, each followed by a pass that lists every mirror.
	var used []string
	for i := range 3 {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: fmt.Sprintf("mirror-user-%d-", i)}}
		if err := env.Client.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ns) })
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "owner"}}
		if err := env.Client.Create(ctx, owner); err != nil {
			t.Fatal(err)
		}
		mirror := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns.Name, Name: credentials.MirrorName(id.Name),
			Labels:          map[string]string{infrav1.MirroredLabel: "true", infrav1.ManagedLabel: "true"},
			Annotations:     map[string]string{infrav1.IdentityAnnotation: id.Name, infrav1.SourceHashAnnotation: "h"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
		}}
		if err := env.Client.Create(ctx, mirror); err != nil {
			t.Fatal(err)
		}
		used = append(used, ns.Name)
		waitIdentity(t, id, func(id *infrav1.TerraformClusterIdentity) bool { return len(id.Status.Namespaces) == len(used) })
	}
	if n := managerRequests.count(everySecret) - before; n != 0 {
		t.Errorf("the identity's passes listed every namespace's Secrets from the API server %d times; want 0 (the cache holds the mirrors)", n)
	}
}

func waitIdentity(t *testing.T, id *infrav1.TerraformClusterIdentity, done func(*infrav1.TerraformClusterIdentity) bool) {
	t.Helper()
	got := &infrav1.TerraformClusterIdentity{}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(id), got); err != nil {
			return false, err
		}
		return done(got), nil
	})
	if err != nil {
		t.Fatalf("TerraformClusterIdentity %s: status never reached what the test waits for (%v): %+v", id.Name, err, got.Status)
	}
}
