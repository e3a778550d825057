package readset

import (
	"context"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// read is one recorded Get or List.
type read struct {
	gvk schema.GroupVersionKind
	// key is the Get's object, or the List's namespace (Name empty).
	key  client.ObjectKey
	list bool
	// selector is the List's label selector.
	selector string
	// seen is the Get's resourceVersion ("" when absent) or the List's
	// members, "name@resourceVersion" sorted and joined.
	seen string
}

// id identifies the read, so that a second read of the same thing
// replaces the first.
func (r read) id() string {
	return r.gvk.String() + "|" + r.key.String() + "|" + r.selector + "|" + map[bool]string{true: "list"}[r.list]
}

// Set is the record of one pass. It is safe for concurrent use.
type Set struct {
	mu     sync.Mutex
	reads  map[string]read
	wrote  bool
	opaque bool
}

type ctxKey struct{}

// Start returns a context whose tracked reads and writes go to a new Set.
func Start(ctx context.Context) (context.Context, *Set) {
	s := &Set{reads: map[string]read{}}
	return context.WithValue(ctx, ctxKey{}, s), s
}

// from returns the context's Set, nil outside a recorded pass.
func from(ctx context.Context) *Set {
	s, _ := ctx.Value(ctxKey{}).(*Set)
	return s
}

func (s *Set) add(r read) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads[r.id()] = r
}

func (s *Set) markWrote() {
	s.mu.Lock()
	s.wrote = true
	s.mu.Unlock()
}

func (s *Set) markOpaque() {
	s.mu.Lock()
	s.opaque = true
	s.mu.Unlock()
}

// Wrote tells whether the pass wrote anything through a tracked client.
func (s *Set) Wrote() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wrote
}

// Replayable tells whether every read can be replayed: none failed, none
// was paged or filtered by field, and there was at least one.
func (s *Set) Replayable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.opaque && len(s.reads) > 0
}

// Len is the number of distinct reads recorded.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reads)
}

// snapshot returns the reads in a stable order.
func (s *Set) snapshot() []read {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]read, 0, len(s.reads))
	for _, r := range s.reads {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id() < out[j].id() })
	return out
}

// members joins a list's "name@resourceVersion" entries in a stable order.
func members(list client.ObjectList) (string, error) {
	var entries []string
	err := meta.EachListItem(list, func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		entries = append(entries, m.GetName()+"@"+m.GetResourceVersion())
		return nil
	})
	sort.Strings(entries)
	return strings.Join(entries, ","), err
}
