package readset_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"captf.io/captf/internal/readset"
)

// BenchmarkMetadataCachePerSecret: the heap a namespace's metadata cache
// holds for each of its Secrets (each with a tenant's labels and a 2 KiB
// annotation), against a plain metadata watch of the same Secrets (what a
// controller-runtime metadata informer keeps without our transform).
func BenchmarkMetadataCachePerSecret(b *testing.B) {
	const secrets = 2000
	if env == nil {
		b.Skip("no control plane")
	}
	ctx := b.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "readset-bench-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	note := string(make([]byte, 2048))
	for i := range secrets {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("tenant-%05d", i),
			Labels: map[string]string{"app.kubernetes.io/name": "tenant", "owner": "helm"}, Annotations: map[string]string{"note": note}}}
		if err := env.Client.Create(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	secretKind := corev1.SchemeGroupVersion.WithKind("Secret")
	// One HTTP client and RESTMapper for both, made (and the mapper warmed)
	// before measuring, as the manager shares its own.
	httpClient, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		b.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(env.Config, httpClient)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := mapper.RESTMapping(secretKind.GroupKind(), secretKind.Version); err != nil {
		b.Fatal(err)
	}
	plain := heapOf(b, func(ctx context.Context) {
		c, err := cache.New(env.Config, cache.Options{HTTPClient: httpClient, Mapper: mapper, Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns.Name: {}}})
		if err != nil {
			b.Fatal(err)
		}
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(secretKind)
		if _, err := c.GetInformer(ctx, m, cache.BlockUntilSynced(false)); err != nil {
			b.Fatal(err)
		}
		go func() { _ = c.Start(ctx) }()
		if !c.WaitForCacheSync(ctx) {
			b.Fatal("the plain metadata cache did not sync")
		}
	})
	ours := heapOf(b, func(ctx context.Context) {
		n := &readset.Namespaces{Config: env.Config, HTTPClient: httpClient, Mapper: mapper, Scheme: env.Scheme, Kinds: []schema.GroupVersionKind{secretKind}}
		go func() { _ = n.Start(ctx) }()
		if err := n.Warm(ns.Name); err != nil {
			b.Fatal(err)
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return n.List(ctx, list, client.InNamespace(ns.Name)) == nil && len(list.Items) == secrets, nil
		}); err != nil {
			b.Fatal("the namespace's metadata cache did not sync")
		}
	})
	b.ReportMetric(ours/secrets, "B/secret")
	b.ReportMetric(plain/secrets, "plain-B/secret")
	b.ReportMetric(ours/plain, "ratio")
	b.Logf("%d Secrets: %.0f B each in the namespace's metadata cache, %.0f B in a plain metadata watch (ratio %.2f)", secrets, ours/secrets, plain/secrets, ours/plain)
}

// heapOf is the live heap start adds (a cache it starts), measured while
// that cache still runs.
func heapOf(b *testing.B, start func(ctx context.Context)) float64 {
	b.Helper()
	before := liveHeap()
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	for range b.N {
		start(ctx)
	}
	after := liveHeap()
	return (after - before) / float64(b.N)
}

func liveHeap() float64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}
