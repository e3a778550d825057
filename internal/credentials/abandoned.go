package credentials

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/protection"
)

// ReleaseAbandonedMirror lets go of a mirror the garbage collector is
// deleting while captf.io/state-protection keeps it, once none of the
// objects its owner references name exists any more (their finalizers
// were stripped by hand, or they went without CAPTF): no destroy can need
// its credentials then, and keeping it would hold its namespace's deletion
// for ever. Owners are read through reader (uncached). It reports whether
// it released the mirror.
func ReleaseAbandonedMirror(ctx context.Context, c client.Client, reader client.Reader, mirror *metav1.PartialObjectMetadata) (bool, error) {
	if !protection.Terminating(mirror) || !protection.Protected(mirror) {
		return false, nil
	}
	for _, ref := range mirror.OwnerReferences {
		owner := &unstructured.Unstructured{}
		owner.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
		err := reader.Get(ctx, client.ObjectKey{Namespace: mirror.Namespace, Name: ref.Name}, owner)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return false, fmt.Errorf("reading %s %s, an owner of mirror Secret %s/%s: %w", ref.Kind, ref.Name, mirror.Namespace, mirror.Name, err)
		case owner.GetUID() == ref.UID:
			return false, nil // a user may still destroy with it
		}
	}
	ctrl.LoggerFrom(ctx).Info("Releasing a credentials mirror whose users are all gone", "secret", client.ObjectKeyFromObject(mirror))
	if err := protection.Release(ctx, c, mirror); err != nil {
		return false, err
	}
	return true, nil
}
