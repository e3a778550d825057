package readset

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespaces is a metadata cache of the Kinds, one per namespace. A
// namespace's cache starts the first time a record reads there (Warm), and
// stops once no replay or record has used it for Idle, so a namespace no
// settled object reads is not watched, however many Secrets a tenant
// keeps in it. Each cached object keeps its name, namespace,
// labels and resourceVersion only. It runs as a manager Runnable; a
// namespace warmed before Start starts with it.
type Namespaces struct {
	Config *rest.Config
	// HTTPClient is shared by every namespace's cache (nil: one of its
	// own each).
	HTTPClient *http.Client
	Scheme     *runtime.Scheme
	Mapper     meta.RESTMapper
	Kinds      []schema.GroupVersionKind
	// Only, when set, is the one namespace that may be cached (the
	// manager's --namespace): a read elsewhere is ErrOutside.
	Only string
	// Idle is how long a namespace's cache runs unused before it stops
	// (zero: never). A namespace whose objects are settled is used at
	// every resync, so a few sync periods keep it.
	Idle time.Duration

	mu     sync.Mutex
	ctx    context.Context
	caches map[string]*namespaceCache
}

type namespaceCache struct {
	cache  cache.Cache
	synced atomic.Bool
	// used is when a replay or a record last used it (UnixNano).
	used atomic.Int64
	stop context.CancelFunc
}

var (
	// ErrOutside is a read in a namespace the cache may not hold.
	ErrOutside = errors.New("the namespace is outside the manager's")
	// ErrWarming is a read in a namespace whose cache has not synced (yet,
	// or ever: one the manager may not watch).
	ErrWarming = errors.New("the namespace's metadata cache is not synced")
)

// Start starts the namespaces warmed so far, and every later one, until
// ctx ends; it stops those left idle.
func (n *Namespaces) Start(ctx context.Context) error {
	n.mu.Lock()
	n.ctx = ctx
	for _, c := range n.caches {
		c.start(ctx)
	}
	n.mu.Unlock()
	if n.Idle <= 0 {
		<-ctx.Done()
		return nil
	}
	tick := time.NewTicker(n.Idle / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-tick.C:
			n.stopIdle(now)
		}
	}
}

// stopIdle stops the caches unused for Idle.
func (n *Namespaces) stopIdle(now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ns, c := range n.caches {
		if now.Sub(time.Unix(0, c.used.Load())) >= n.Idle {
			delete(n.caches, ns)
			if c.stop != nil {
				c.stop()
			}
		}
	}
}

// Warm starts the cache of namespace ns, unless it runs already.
func (n *Namespaces) Warm(ns string) error {
	// Never every namespace's: a read without one replays live.
	if ns == "" || (n.Only != "" && ns != n.Only) {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if c, ok := n.caches[ns]; ok {
		c.used.Store(time.Now().UnixNano())
		return nil
	}
	// A read of anything else than the Kinds' metadata fails instead of
	// starting an informer of its own (one holding Secret data, say).
	opts := cache.Options{HTTPClient: n.HTTPClient, Scheme: n.Scheme, Mapper: n.Mapper, ReaderFailOnMissingInformer: true,
		DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultTransform: KeepIdentity}
	c, err := cache.New(n.Config, opts)
	if err != nil {
		return fmt.Errorf("creating the metadata cache of namespace %s: %w", ns, err)
	}
	// The informers exist before the cache starts, so a read never waits
	// for one to sync.
	for _, gvk := range n.Kinds {
		if _, err := c.GetInformer(context.Background(), metadataOf(gvk), cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("watching the metadata of %s in namespace %s: %w", gvk.Kind, ns, err)
		}
	}
	if n.caches == nil {
		n.caches = map[string]*namespaceCache{}
	}
	nc := &namespaceCache{cache: c}
	nc.used.Store(time.Now().UnixNano())
	n.caches[ns] = nc
	if n.ctx != nil {
		nc.start(n.ctx)
	}
	return nil
}

func (c *namespaceCache) start(ctx context.Context) {
	ctx, c.stop = context.WithCancel(ctx)
	go func() { _ = c.cache.Start(ctx) }()
	go func() { c.synced.Store(c.cache.WaitForCacheSync(ctx)) }()
}

// WaitForSync waits until the cache of every namespace warmed so far has
// synced, and tells whether they all did before ctx ended.
func (n *Namespaces) WaitForSync(ctx context.Context) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n.mu.Lock()
		all := true
		for _, c := range n.caches {
			all = all && c.synced.Load()
		}
		n.mu.Unlock()
		if all {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// Cached lists the namespaces whose cache runs, sorted.
func (n *Namespaces) Cached() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.caches))
	for ns := range n.caches {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// in returns the synced cache of namespace ns.
func (n *Namespaces) in(ns string) (client.Reader, error) {
	if n.Only != "" && ns != n.Only {
		return nil, ErrOutside
	}
	n.mu.Lock()
	c := n.caches[ns]
	n.mu.Unlock()
	if c == nil || !c.synced.Load() {
		return nil, ErrWarming
	}
	c.used.Store(time.Now().UnixNano())
	return c.cache, nil
}

// Get reads key's metadata (obj a PartialObjectMetadata) from its
// namespace's cache.
func (n *Namespaces) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c, err := n.in(key.Namespace)
	if err != nil {
		return err
	}
	return c.Get(ctx, key, obj, opts...)
}

// List lists in one namespace's cache (list a PartialObjectMetadataList);
// a list over every namespace is not cached.
func (n *Namespaces) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	ns := (&client.ListOptions{}).ApplyOptions(opts).Namespace
	if ns == "" {
		return ErrOutside
	}
	c, err := n.in(ns)
	if err != nil {
		return err
	}
	return c.List(ctx, list, opts...)
}

func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// KeepIdentity is a cache transform that keeps of an object's metadata
// what a replay or a wake compares (name, namespace, labels,
// resourceVersion): a tenant's large annotations cost the manager no
// memory.
func KeepIdentity(o any) (any, error) {
	if m, ok := o.(*metav1.PartialObjectMetadata); ok {
		m.ObjectMeta = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, ResourceVersion: m.ResourceVersion}
	}
	return o, nil
}
