package readset

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// View is what a record is replayed against.
type View struct {
	// Cache holds the Cached kinds (the manager's informers).
	Cache  client.Reader
	Cached map[schema.GroupVersionKind]bool
	// Metadata holds the metadata of the MetadataKinds' objects, in the
	// namespaces the records read (see Warm).
	Metadata      *Namespaces
	MetadataKinds map[schema.GroupVersionKind]bool
	// Live reads the metadata of any other kind: one request a read.
	Live   client.Reader
	Scheme *runtime.Scheme
}

// Holds tells whether every read of rec returns now what it returned when
// recorded: the same resourceVersion, the same absence, the same list
// members. No record (nil: a Set that cannot be replayed), or a read that
// fails, does not hold.
func (v *View) Holds(ctx context.Context, rec *Record) bool {
	if rec == nil {
		return false
	}
	h := sha256.New()
	for _, k := range rec.reads {
		seen, err := v.replay(ctx, k.read())
		if err != nil {
			return false
		}
		h.Write([]byte(seen))
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum == rec.digest
}

func (v *View) replay(ctx context.Context, r read) (string, error) {
	src, from := v.Live, live
	switch {
	case v.MetadataKinds[r.gvk]:
		src, from = v.Metadata, metadataCache
	case v.Cached[r.gvk]:
		src, from = v.Cache, typedCache
	}
	seen, err := v.replayFrom(ctx, src, from, r)
	// A namespace outside the manager's, or whose cache has not synced, is
	// read live: still cheaper than the pass. One with no cache (stopped
	// when idle) gets it back for the next replay.
	if from == metadataCache && (errors.Is(err, ErrOutside) || errors.Is(err, ErrWarming)) {
		if errors.Is(err, ErrWarming) {
			_ = v.Metadata.Warm(r.key.Namespace)
		}
		return v.replayFrom(ctx, v.Live, live, r)
	}
	return seen, err
}

// WaitForSync waits until every metadata cache warmed so far has synced,
// and tells whether they did before ctx ended.
func (v *View) WaitForSync(ctx context.Context) bool {
	return v.Metadata == nil || v.Metadata.WaitForSync(ctx)
}

// Warm starts the metadata cache of every namespace where rec read a
// MetadataKind, so that it has synced by the record's replay.
func (v *View) Warm(rec *Record) error {
	if rec == nil {
		return nil
	}
	var errs []error
	for _, k := range rec.reads {
		if v.MetadataKinds[k.gvk.Value()] {
			errs = append(errs, v.Metadata.Warm(k.namespace.Value()))
		}
	}
	return errors.Join(errs...)
}

func (v *View) replayFrom(ctx context.Context, src client.Reader, from source, r read) (string, error) {
	if r.list {
		return v.list(ctx, src, from, r)
	}
	obj, err := v.object(from, r.gvk)
	if err != nil {
		return "", err
	}
	switch err := src.Get(ctx, r.key, obj); {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	}
	return obj.GetResourceVersion(), nil
}

// source is where a replay reads.
type source int

const (
	live source = iota
	metadataCache
	typedCache
)

// object is what a read is replayed into: the typed object for the typed
// cache, the metadata alone for the metadata cache and live reads.
func (v *View) object(from source, gvk schema.GroupVersionKind) (client.Object, error) {
	if from == typedCache {
		o, err := v.Scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		obj, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%s is not an object", gvk)
		}
		return obj, nil
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m, nil
}

func (v *View) list(ctx context.Context, src client.Reader, from source, r read) (string, error) {
	var list client.ObjectList
	if from == typedCache {
		o, err := v.Scheme.New(r.gvk.GroupVersion().WithKind(r.gvk.Kind + "List"))
		if err != nil {
			return "", err
		}
		l, ok := o.(client.ObjectList)
		if !ok {
			return "", fmt.Errorf("%s is not a list", r.gvk)
		}
		list = l
	} else {
		m := &metav1.PartialObjectMetadataList{}
		m.SetGroupVersionKind(r.gvk.GroupVersion().WithKind(r.gvk.Kind + "List"))
		list = m
	}
	opts := []client.ListOption{client.InNamespace(r.key.Namespace)}
	if r.selector != "" {
		sel, err := labels.Parse(r.selector)
		if err != nil {
			return "", err
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	if from != live {
		opts = append(opts, client.UnsafeDisableDeepCopy)
	}
	if err := src.List(ctx, list, opts...); err != nil {
		return "", err
	}
	return members(list)
}
