package writecheck

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type checkKey struct{}

// Arm returns ctx carrying check, which every write through a Client with
// that context runs first.
func Arm(ctx context.Context, check func(context.Context) error) context.Context {
	return context.WithValue(ctx, checkKey{}, check)
}

// run runs the check ctx carries, if any.
func run(ctx context.Context) error {
	if check, ok := ctx.Value(checkKey{}).(func(context.Context) error); ok {
		return check(ctx)
	}
	return nil
}

// Client is c whose writes (of objects, their status and their
// subresources) first run the check their context carries.
func Client(c client.Client) client.Client { return checked{Client: c} }

type checked struct{ client.Client }

func (c checked) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return c.Client.Apply(ctx, obj, opts...)
}

func (c checked) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c checked) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return c.Client.Delete(ctx, obj, opts...)
}

func (c checked) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return c.Client.Update(ctx, obj, opts...)
}

func (c checked) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c checked) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c checked) Status() client.SubResourceWriter {
	return checkedStatus{c.Client.Status()}
}

func (c checked) SubResource(name string) client.SubResourceClient {
	sc := c.Client.SubResource(name)
	return checkedSub{SubResourceReader: sc, checkedStatus: checkedStatus{sc}}
}

type checkedSub struct {
	client.SubResourceReader
	checkedStatus
}

// checkedStatus checks the status and subresource writes.
type checkedStatus struct{ w client.SubResourceWriter }

func (w checkedStatus) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return w.w.Create(ctx, obj, sub, opts...)
}

func (w checkedStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return w.w.Update(ctx, obj, opts...)
}

func (w checkedStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return w.w.Patch(ctx, obj, patch, opts...)
}

func (w checkedStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if err := run(ctx); err != nil {
		return err
	}
	return w.w.Apply(ctx, obj, opts...)
}
