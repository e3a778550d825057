package readset

import (
	"context"
	"crypto/sha256"
	"sort"
	"strings"
	"sync"
	"unique"

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

// add records r. A second read of the same thing that returned something
// else makes the record opaque: the pass may have decided on either.
func (s *Set) add(r read) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.reads[r.id()]; ok && prev.seen != r.seen {
		s.opaque = true
	}
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

// Record is what a replay needs of a Set, compact: the engine keeps one
// per settled object. Each read keeps its kind (interned), namespace
// (interned), name, selector and whether it listed; what each returned
// is kept as one digest.
type Record struct {
	reads  []key
	digest [sha256.Size]byte
}

// key is a read without what it returned.
type key struct {
	gvk            unique.Handle[schema.GroupVersionKind]
	namespace      unique.Handle[string]
	name, selector string
	list           bool
}

// Record returns the Set's compact record, nil when the Set cannot be
// replayed.
func (s *Set) Record() *Record {
	if !s.Replayable() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.reads))
	for id := range s.reads {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	rec := &Record{reads: make([]key, 0, len(ids))}
	h := sha256.New()
	for _, id := range ids {
		r := s.reads[id]
		rec.reads = append(rec.reads, key{gvk: unique.Make(r.gvk), namespace: unique.Make(r.key.Namespace), name: r.key.Name,
			selector: r.selector, list: r.list})
		h.Write([]byte(r.seen))
		h.Write([]byte{0})
	}
	copy(rec.digest[:], h.Sum(nil))
	return rec
}

// read is the key's read, what it returned unknown.
func (k key) read() read {
	return read{gvk: k.gvk.Value(), key: client.ObjectKey{Namespace: k.namespace.Value(), Name: k.name}, list: k.list, selector: k.selector}
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
