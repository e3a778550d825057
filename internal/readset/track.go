package readset

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Reader records, in the context's Set, the Gets and Lists made through r
// (scheme names their kinds). Outside a recorded pass it only reads.
func Reader(r client.Reader, scheme *runtime.Scheme) client.Reader {
	return reader{Reader: r, scheme: scheme}
}

type reader struct {
	client.Reader
	scheme *runtime.Scheme
}

func (r reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.Reader.Get(ctx, key, obj, opts...)
	recordGet(ctx, r.scheme, key, obj, len(opts) > 0, err)
	return err
}

func (r reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := r.Reader.List(ctx, list, opts...)
	recordList(ctx, r.scheme, list, opts, err)
	return err
}

func recordGet(ctx context.Context, scheme *runtime.Scheme, key client.ObjectKey, obj client.Object, withOptions bool, err error) {
	s := from(ctx)
	if s == nil {
		return
	}
	gvk, gerr := apiutil.GVKForObject(obj, scheme)
	switch {
	case gerr != nil || withOptions:
		s.markOpaque()
	case err == nil:
		s.add(read{gvk: gvk, key: key, seen: obj.GetResourceVersion()})
	case apierrors.IsNotFound(err):
		s.add(read{gvk: gvk, key: key})
	default:
		s.markOpaque()
	}
}

func recordList(ctx context.Context, scheme *runtime.Scheme, list client.ObjectList, opts []client.ListOption, err error) {
	s := from(ctx)
	if s == nil {
		return
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	gvk, gerr := apiutil.GVKForObject(list, scheme)
	// A list cut by a limit is whole when it came back without a continue
	// token.
	if err != nil || gerr != nil || lo.Continue != "" || (lo.Limit > 0 && !whole(list)) || (lo.FieldSelector != nil && !lo.FieldSelector.Empty()) {
		s.markOpaque()
		return
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	r := read{gvk: gvk, key: client.ObjectKey{Namespace: lo.Namespace}, list: true}
	if lo.LabelSelector != nil {
		r.selector = lo.LabelSelector.String()
	}
	seen, err := members(list)
	if err != nil {
		s.markOpaque()
		return
	}
	r.seen = seen
	s.add(r)
}

// Client records, in the context's Set, what a pass reads through c and
// that it wrote, whatever it wrote (an object, a status, a subresource).
func Client(c client.Client) client.Client {
	return trackedClient{Client: c, reads: reader{Reader: c, scheme: c.Scheme()}}
}

type trackedClient struct {
	client.Client
	reads reader
}

func wrote(ctx context.Context) {
	if s := from(ctx); s != nil {
		s.markWrote()
	}
}

func (c trackedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.reads.Get(ctx, key, obj, opts...)
}

func (c trackedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.reads.List(ctx, list, opts...)
}

func (c trackedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	wrote(ctx)
	return c.Client.Apply(ctx, obj, opts...)
}

func (c trackedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	wrote(ctx)
	return c.Client.Create(ctx, obj, opts...)
}

func (c trackedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	wrote(ctx)
	return c.Client.Delete(ctx, obj, opts...)
}

func (c trackedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	wrote(ctx)
	return c.Client.Update(ctx, obj, opts...)
}

func (c trackedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	wrote(ctx)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c trackedClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	wrote(ctx)
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c trackedClient) Status() client.SubResourceWriter { return subWriter{c.Client.Status()} }

func (c trackedClient) SubResource(name string) client.SubResourceClient {
	sc := c.Client.SubResource(name)
	return subClient{SubResourceReader: sc, subWriter: subWriter{sc}}
}

type subWriter struct{ w client.SubResourceWriter }

func (w subWriter) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	wrote(ctx)
	return w.w.Create(ctx, obj, sub, opts...)
}

func (w subWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	wrote(ctx)
	return w.w.Update(ctx, obj, opts...)
}

func (w subWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	wrote(ctx)
	return w.w.Patch(ctx, obj, patch, opts...)
}

func (w subWriter) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	wrote(ctx)
	return w.w.Apply(ctx, obj, opts...)
}

type subClient struct {
	client.SubResourceReader
	subWriter
}

// Get reads a subresource, which no cache holds: the record turns opaque.
func (c subClient) Get(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceGetOption) error {
	if s := from(ctx); s != nil {
		s.markOpaque()
	}
	return c.SubResourceReader.Get(ctx, obj, sub, opts...)
}

// whole: list holds every match (the server left no continue token).
func whole(list client.ObjectList) bool {
	m, err := meta.ListAccessor(list)
	return err == nil && m.GetContinue() == ""
}
