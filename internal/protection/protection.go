package protection

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Finalizer is the finalizer this package owns.
const Finalizer = infrav1.StateProtectionFinalizer

// Protected reports whether obj carries the finalizer.
func Protected(obj metav1.Object) bool {
	return slices.Contains(obj.GetFinalizers(), Finalizer)
}

// Terminating reports whether obj is being deleted and only a finalizer
// keeps it.
func Terminating(obj metav1.Object) bool {
	return obj.GetDeletionTimestamp() != nil
}

// Protect adds the finalizer to obj, in memory, and reports whether it
// changed obj. An object being deleted is left alone: the API server
// refuses new finalizers on it (whatever keeps it already keeps it).
func Protect(obj metav1.Object) bool {
	if Terminating(obj) || Protected(obj) {
		return false
	}
	obj.SetFinalizers(append(obj.GetFinalizers(), Finalizer))
	return true
}

// Unprotect removes the finalizer from obj, in memory, and reports
// whether it changed obj.
func Unprotect(obj metav1.Object) bool {
	if !Protected(obj) {
		return false
	}
	obj.SetFinalizers(slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool { return f == Finalizer }))
	return true
}

// Release removes the finalizer from obj as read (an optimistic lock
// keeps other finalizers written meanwhile). An object already gone is
// not an error. A Secret being deleted is gone once released.
func Release(ctx context.Context, c client.Client, obj client.Object) error {
	if !Protected(obj) {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	Unprotect(obj)
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("releasing %s: %w", obj.GetName(), err)
	}
	return nil
}

// Delete releases obj and deletes it (opts apply to the delete). obj must
// be as read, with its resourceVersion. An object already being deleted
// is only released; one already gone is not an error.
func Delete(ctx context.Context, c client.Client, obj client.Object, opts ...client.DeleteOption) error {
	if err := Release(ctx, c, obj); err != nil {
		return err
	}
	if Terminating(obj) {
		return nil
	}
	if err := c.Delete(ctx, obj, opts...); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s: %w", obj.GetName(), err)
	}
	return nil
}

// DeleteEach lists (live, with r) the objects list selects, and releases
// and deletes them one by one (Delete): CAPTF never deletes a collection.
// The items of a metadata list are Secrets' (state.SecretMetadataList).
func DeleteEach(ctx context.Context, c client.Client, r client.Reader, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.List(ctx, list, opts...); err != nil {
		return err
	}
	return meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		if pm, ok := obj.(*metav1.PartialObjectMetadata); ok {
			pm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
		}
		return Delete(ctx, c, obj)
	})
}
