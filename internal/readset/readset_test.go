package readset_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/readset"
	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { os.Exit(envtest.Main(m, &env, envtest.Options{})) }

// fixture is a namespace, a View over started caches, and a reader and a
// client that record into a pass's Set.
type fixture struct {
	ns     string
	view   *readset.View
	reader client.Reader
	client client.Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	envtest.Require(t, env)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "readset-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	secretKind := corev1.SchemeGroupVersion.WithKind("Secret")
	secrets := &readset.Namespaces{Config: env.Config, Scheme: env.Scheme, Kinds: []schema.GroupVersionKind{secretKind}}
	go func() { _ = secrets.Start(ctx) }()
	if err := secrets.Warm(ns.Name); err != nil {
		t.Fatal(err)
	}
	typed, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns.Name: {}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = typed.Start(ctx) }()
	if !typed.WaitForCacheSync(ctx) {
		t.Fatal("the typed cache did not sync")
	}
	synced(t, secrets, ns.Name)
	// The typed cache holds ConfigMaps: its informer starts on first use.
	if _, err := typed.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	return &fixture{
		ns: ns.Name,
		view: &readset.View{Cache: typed, Cached: map[schema.GroupVersionKind]bool{corev1.SchemeGroupVersion.WithKind("ConfigMap"): true},
			Metadata: secrets, MetadataKinds: map[schema.GroupVersionKind]bool{secretKind: true}, Live: env.Client, Scheme: env.Scheme},
		reader: readset.Reader(env.Client, env.Scheme),
		client: readset.Client(env.Client),
	}
}

// synced waits until the metadata cache of namespace ns has synced.
func synced(t *testing.T, c *readset.Namespaces, ns string) {
	t.Helper()
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.List(ctx, list, client.InNamespace(ns)) == nil, nil
	})
	if err != nil {
		t.Fatalf("the metadata cache of namespace %s never synced", ns)
	}
}

func (f *fixture) secret(t *testing.T, name string, labels map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: labels,
		Annotations: map[string]string{"note": "a tenant's annotation"}}, Data: map[string][]byte{"k": []byte("v1")}}
	if err := env.Client.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// holds waits until the View tells want for set (the caches follow the API
// server by a watch event), and for the record as a checkpoint keeps it
// (encoded and decoded again): a restarted manager replays that one.
func (f *fixture) holds(t *testing.T, set *readset.Set, want bool, what string) {
	t.Helper()
	rec := set.Record()
	kept := roundTrip(t, rec)
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		return f.view.Holds(ctx, rec) == want && f.view.Holds(ctx, kept) == want, nil
	})
	if err != nil {
		t.Fatalf("%s: the record never %s", what, map[bool]string{true: "held", false: "stopped holding"}[want])
	}
}

// roundTrip encodes rec as a checkpoint keeps it and decodes it again.
func roundTrip(t *testing.T, rec *readset.Record) *readset.Record {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	out := &readset.Record{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decoding the record %s: %v", b, err)
	}
	return out
}

// cachedMeta reads s's entry in the metadata cache.
func (f *fixture) cachedMeta(t *testing.T, s *corev1.Secret) *metav1.PartialObjectMetadata {
	t.Helper()
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := f.view.Metadata.Get(t.Context(), client.ObjectKeyFromObject(s), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// secretCached waits until the metadata cache has s at its current version.
func (f *fixture) secretCached(t *testing.T, s *corev1.Secret) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := f.view.Metadata.Get(ctx, client.ObjectKeyFromObject(s), m)
		return err == nil && m.ResourceVersion == s.ResourceVersion, nil
	})
	if err != nil {
		t.Fatalf("the metadata cache never showed %s at %s", s.Name, s.ResourceVersion)
	}
}

// TestARecordHoldsUntilWhatItReadChanges: a pass read a Secret, listed the
// Secrets of a label and found another absent; the record holds until one
// of those reads would return something else, and only then.
func TestARecordHoldsUntilWhatItReadChanges(t *testing.T) {
	member := map[string]string{"app": "x"}
	testCases := []struct {
		name   string
		change func(t *testing.T, f *fixture, read, listed *corev1.Secret)
	}{
		{name: "the Secret read changes", change: func(t *testing.T, _ *fixture, read, _ *corev1.Secret) {
			read.Data["k"] = []byte("v2")
			if err := env.Client.Update(t.Context(), read); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the Secret read goes", change: func(t *testing.T, _ *fixture, read, _ *corev1.Secret) {
			if err := env.Client.Delete(t.Context(), read); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the Secret read absent appears", change: func(t *testing.T, f *fixture, _, _ *corev1.Secret) {
			f.secret(t, "absent", nil)
		}},
		{name: "a Secret joins the list", change: func(t *testing.T, f *fixture, _, _ *corev1.Secret) {
			f.secret(t, "joiner", member)
		}},
		{name: "a listed Secret leaves the list", change: func(t *testing.T, _ *fixture, _, listed *corev1.Secret) {
			listed.Labels = nil
			if err := env.Client.Update(t.Context(), listed); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a listed Secret changes", change: func(t *testing.T, _ *fixture, _, listed *corev1.Secret) {
			listed.Data["k"] = []byte("v2")
			if err := env.Client.Update(t.Context(), listed); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			read, listed := f.secret(t, "read", nil), f.secret(t, "listed", member)
			unrelated := f.secret(t, "unrelated", nil)
			f.secretCached(t, read)
			if m := f.cachedMeta(t, read); len(m.Annotations)+len(m.ManagedFields)+len(m.OwnerReferences)+len(m.Finalizers) > 0 {
				t.Fatalf("the metadata cache keeps more than a Secret's identity: %+v", m.ObjectMeta)
			}
			ctx, set := readset.Start(t.Context())
			if err := f.reader.Get(ctx, client.ObjectKeyFromObject(read), &corev1.Secret{}); err != nil {
				t.Fatal(err)
			}
			if err := f.reader.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "absent"}, &corev1.Secret{}); err == nil {
				t.Fatal("read a Secret that does not exist")
			}
			meta := &metav1.PartialObjectMetadataList{}
			meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
			if err := f.reader.List(ctx, meta, client.InNamespace(f.ns), client.MatchingLabels(member)); err != nil {
				t.Fatal(err)
			}
			if len(meta.Items) != 1 || set.Len() != 3 || set.Wrote() || !set.Replayable() {
				t.Fatalf("recorded %d reads (want 3) over a list of %d, wrote %t, replayable %t", set.Len(), len(meta.Items), set.Wrote(), set.Replayable())
			}
			f.holds(t, set, true, "before any change")

			// A change to a Secret the pass did not read costs nothing.
			unrelated.Data["k"] = []byte("v2")
			if err := env.Client.Update(t.Context(), unrelated); err != nil {
				t.Fatal(err)
			}
			f.secretCached(t, unrelated)
			if !f.view.Holds(t.Context(), set.Record()) {
				t.Fatal("a change to a Secret the pass never read broke the record")
			}

			tc.change(t, f, read, listed)
			f.holds(t, set, false, "after the change")
		})
	}
}

// TestCachedKindsReplayFromTheCacheAndOthersLive: a ConfigMap (a kind the
// View's cache holds) is compared there; a Lease (one it does not) is read
// live, so its change shows at once.
func TestCachedKindsReplayFromTheCacheAndOthersLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "cm"}, Data: map[string]string{"k": "v1"}}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "lease"}}
	for _, o := range []client.Object{cm, lease} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	pass, cmSet := readset.Start(ctx)
	if err := f.reader.Get(pass, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	f.holds(t, cmSet, true, "the ConfigMap before its change")
	cm.Data["k"] = "v2"
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	f.holds(t, cmSet, false, "the ConfigMap after its change")

	pass, leaseSet := readset.Start(ctx)
	if err := f.reader.Get(pass, client.ObjectKeyFromObject(lease), &coordinationv1.Lease{}); err != nil {
		t.Fatal(err)
	}
	if !f.view.Holds(ctx, leaseSet.Record()) {
		t.Fatal("a live read of an unchanged Lease did not hold")
	}
	lease.Spec.HolderIdentity = new(string)
	*lease.Spec.HolderIdentity = "someone"
	if err := env.Client.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if f.view.Holds(ctx, leaseSet.Record()) {
		t.Fatal("a live read held after the Lease changed")
	}
}

// TestWritesAndUnreplayableReadsAreRecorded: whatever a pass writes through
// the client is known, and a record holding a read the View cannot replay
// (a field selector, a failed read) or no read at all never holds.
func TestWritesAndUnreplayableReadsAreRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.secret(t, "s", nil)
	f.secret(t, "s2", nil)
	testCases := []struct {
		name              string
		do                func(ctx context.Context) error
		wrote, replayable bool
	}{
		{name: "a Get", do: func(ctx context.Context) error {
			return f.client.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{})
		}, replayable: true},
		{name: "nothing read", do: func(context.Context) error { return nil }},
		{name: "a create", do: func(ctx context.Context) error {
			return f.client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, GenerateName: "w-"}})
		}, wrote: true},
		{name: "a status patch", do: func(ctx context.Context) error {
			ns := &corev1.Namespace{}
			if err := f.client.Get(ctx, client.ObjectKey{Name: f.ns}, ns); err != nil {
				return err
			}
			return f.client.Status().Patch(ctx, ns, client.RawPatch("application/merge-patch+json", []byte(`{}`)))
		}, wrote: true, replayable: true},
		{name: "a list by field", do: func(ctx context.Context) error {
			return f.client.List(ctx, &corev1.SecretList{}, client.InNamespace(f.ns),
				client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", "s")})
		}},
		{name: "a Secret read twice, unchanged", do: func(ctx context.Context) error {
			for range 2 {
				if err := f.client.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{}); err != nil {
					return err
				}
			}
			return nil
		}, replayable: true},
		{name: "a Secret read twice, changed in between", do: func(ctx context.Context) error {
			if err := f.client.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{}); err != nil {
				return err
			}
			s.Data["k"] = []byte("changed")
			if err := env.Client.Update(ctx, s); err != nil {
				return err
			}
			return f.client.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{})
		}},
		{name: "a list cut by a limit that came back whole", do: func(ctx context.Context) error {
			return f.client.List(ctx, &corev1.SecretList{}, client.InNamespace(f.ns), client.Limit(3))
		}, replayable: true},
		{name: "a list cut by a limit, to be continued", do: func(ctx context.Context) error {
			return f.client.List(ctx, &corev1.SecretList{}, client.InNamespace(f.ns), client.Limit(1))
		}},
		{name: "a failed read", do: func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			if err := f.client.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{}); err == nil {
				return context.Canceled // a read that should have failed
			}
			return nil
		}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, set := readset.Start(t.Context())
			if err := tc.do(ctx); err != nil {
				t.Fatal(err)
			}
			if set.Wrote() != tc.wrote || set.Replayable() != tc.replayable {
				t.Fatalf("wrote %t, replayable %t; want %t, %t", set.Wrote(), set.Replayable(), tc.wrote, tc.replayable)
			}
			if !tc.replayable && f.view.Holds(ctx, set.Record()) {
				t.Fatal("a record that cannot be replayed held")
			}
		})
	}
	// Outside a pass, the tracked client only reads.
	if err := f.client.Get(t.Context(), client.ObjectKeyFromObject(s), &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
}

// TestOnlyTheNamespacesRecordsReadAreWatched: a tenant's namespace that no
// record reads is not watched, however many Secrets it keeps; a record
// that reads a namespace whose cache has not synced replays live (and
// warms it); under --namespace, a read elsewhere replays live and nothing
// else is watched.
func TestOnlyTheNamespacesRecordsReadAreWatched(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	namespace := func() string {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "readset-other-"}}
		if err := env.Client.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		return ns.Name
	}
	tenant, other := namespace(), namespace()
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "noise"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "source"}, Data: map[string][]byte{"k": []byte("v1")}},
	} {
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	pass, set := readset.Start(ctx)
	source := &corev1.Secret{}
	if err := f.reader.Get(pass, client.ObjectKey{Namespace: other, Name: "source"}, source); err != nil {
		t.Fatal(err)
	}
	if got := f.view.Metadata.Cached(); !sameSet(got, []string{f.ns}) {
		t.Fatalf("namespaces watched before any record read %s: %v", other, got)
	}
	if !f.view.Holds(ctx, set.Record()) {
		t.Fatal("a record in a namespace with no cache did not replay live")
	}
	if got, want := f.view.Metadata.Cached(), []string{f.ns, other}; !sameSet(got, want) {
		t.Fatalf("namespaces watched: %v, want %v (the tenant's %s is read by no record)", got, want, tenant)
	}
	synced(t, f.view.Metadata, other)
	f.holds(t, set, true, "once the namespace's cache synced")
	source.Data["k"] = []byte("v2")
	if err := env.Client.Update(ctx, source); err != nil {
		t.Fatal(err)
	}
	f.holds(t, set, false, "after the source changed")

	// Under --namespace, the source's namespace is never watched: its
	// read replays live.
	scoped := *f.view
	scoped.Metadata = &readset.Namespaces{Config: env.Config, Scheme: env.Scheme, Kinds: f.view.Metadata.Kinds, Only: f.ns}
	pass, set = readset.Start(ctx)
	if err := f.reader.Get(pass, client.ObjectKeyFromObject(source), &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	if err := scoped.Warm(set.Record()); err != nil {
		t.Fatal(err)
	}
	if got := scoped.Metadata.Cached(); len(got) != 0 {
		t.Fatalf("a manager limited to %s watches %v", f.ns, got)
	}
	if !scoped.Holds(ctx, set.Record()) {
		t.Fatal("a read outside --namespace did not replay live")
	}
	source.Data["k"] = []byte("v3")
	if err := env.Client.Update(ctx, source); err != nil {
		t.Fatal(err)
	}
	if scoped.Holds(ctx, set.Record()) {
		t.Fatal("a live replay held after the source changed")
	}
}

func sameSet(a, b []string) bool {
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestAnIdleNamespaceStopsBeingWatched: a namespace's cache that no replay
// or record used for Idle stops; the next replay there reads live and
// starts it again.
func TestAnIdleNamespaceStopsBeingWatched(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	const idle = 300 * time.Millisecond
	n := &readset.Namespaces{Config: env.Config, Scheme: env.Scheme, Kinds: f.view.Metadata.Kinds, Idle: idle}
	go func() { _ = n.Start(ctx) }()
	view := *f.view
	view.Metadata = n
	s := f.secret(t, "kept", nil)
	pass, set := readset.Start(ctx)
	if err := f.reader.Get(pass, client.ObjectKeyFromObject(s), &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	if err := view.Warm(set.Record()); err != nil {
		t.Fatal(err)
	}
	synced(t, n, f.ns)
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return len(n.Cached()) == 0, nil
	})
	if err != nil {
		t.Fatalf("the idle namespace is still watched: %v", n.Cached())
	}
	if !view.Holds(ctx, set.Record()) {
		t.Fatal("a replay in a namespace whose cache stopped did not read live")
	}
	if got := n.Cached(); !sameSet(got, []string{f.ns}) {
		t.Fatalf("the replay did not start the namespace's cache again: %v", got)
	}
}
