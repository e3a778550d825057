package credentials

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/protection"
)

// ReleaseMirror removes user's owner reference (whatever its UID) from the
// mirror of the named identity in namespace, and deletes the mirror when no
// owner reference is left. Only the mirror's metadata is read and written,
// through c. A Secret of that name that is not the identity's mirror is left
// alone (OutcomeConflict).
func ReleaseMirror(ctx context.Context, c client.Client, namespace, identityName string, user client.Object) (Result, error) {
	ref, err := ownerRefTo(c, user)
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		res, err = releaseOnce(ctx, c, namespace, identityName, ref)
		return err
	})
	return res, err
}

func releaseOnce(ctx context.Context, c client.Client, namespace, identityName string, ref metav1.OwnerReference) (Result, error) {
	res, mirror, err := getMirrorMetadata(ctx, c, namespace, identityName)
	if err != nil || mirror == nil {
		return res, err
	}
	refs, removed := withoutOwnerRef(mirror.OwnerReferences, ref)
	if len(refs) == 0 {
		return deleteMirror(ctx, c, res, mirror, true)
	}
	if !removed {
		res.Outcome = OutcomeUnchanged
		return res, nil
	}
	base := mirror.DeepCopy()
	mirror.OwnerReferences = refs
	ctrl.LoggerFrom(ctx).Info("Removing owner reference from credentials mirror",
		"secret", res.Mirror, "owner", ref.Kind+"/"+ref.Name)
	if err := c.Patch(ctx, mirror, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return res, fmt.Errorf("removing %s %s from the owners of mirror Secret %s: %w", ref.Kind, ref.Name, res.Mirror, err)
	}
	res.Outcome = OutcomeReleased
	return res, nil
}

// RevokeMirror deletes the mirror of the named identity in namespace
// whatever its owner references: the identity no longer allows the
// namespace (or no longer exists). A Secret of that name that is not the
// identity's mirror is left alone (OutcomeConflict).
func RevokeMirror(ctx context.Context, c client.Client, namespace, identityName string) (Result, error) {
	res, mirror, err := getMirrorMetadata(ctx, c, namespace, identityName)
	if err != nil || mirror == nil {
		return res, err
	}
	return deleteMirror(ctx, c, res, mirror, false)
}

// CheckRevoke is RevokeMirror without its write: OutcomeRemoved when
// there is a mirror of the identity in namespace to delete, else
// OutcomeAbsent or OutcomeConflict. It writes nothing.
func CheckRevoke(ctx context.Context, c client.Client, namespace, identityName string) (Result, error) {
	res, mirror, err := getMirrorMetadata(ctx, c, namespace, identityName)
	if err == nil && mirror != nil {
		res.Outcome = OutcomeRemoved
	}
	return res, err
}

// getMirrorMetadata reads the mirror's metadata. It returns a nil mirror
// with OutcomeAbsent or OutcomeConflict when there is nothing to change.
func getMirrorMetadata(ctx context.Context, c client.Client, namespace, identityName string) (Result, *metav1.PartialObjectMetadata, error) {
	res := Result{Identity: identityName, Mirror: types.NamespacedName{Namespace: namespace, Name: MirrorName(identityName)}}
	mirror := &metav1.PartialObjectMetadata{}
	mirror.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := c.Get(ctx, res.Mirror, mirror); err != nil {
		if apierrors.IsNotFound(err) {
			res.Outcome = OutcomeAbsent
			return res, nil, nil
		}
		return res, nil, fmt.Errorf("reading mirror Secret %s: %w", res.Mirror, err)
	}
	if ok, why := mirrorOf(mirror, identityName); !ok {
		res.Outcome, res.Conflict = OutcomeConflict, why
		return res, nil, nil
	}
	return res, mirror, nil
}

// deleteMirror releases the mirror's protection and deletes it as it was
// read: the optimistic lock and preconditions make both fail with a
// conflict if it changed since, for example because another user just
// added its reference (exact, in ReleaseMirror). A user who comes between
// the two protects it again on its next write.
func deleteMirror(ctx context.Context, c client.Client, res Result, mirror *metav1.PartialObjectMetadata, exact bool) (Result, error) {
	if err := protection.Release(ctx, c, mirror); err != nil {
		return res, fmt.Errorf("releasing mirror Secret %s: %w", res.Mirror, err)
	}
	if protection.Terminating(mirror) {
		res.Outcome = OutcomeRemoved
		return res, nil
	}
	uid := mirror.GetUID()
	pre := client.Preconditions{UID: &uid}
	if exact {
		rv := mirror.GetResourceVersion()
		pre.ResourceVersion = &rv
	}
	ctrl.LoggerFrom(ctx).Info("Deleting credentials mirror", "secret", res.Mirror, "identity", res.Identity)
	if err := c.Delete(ctx, mirror, pre); err != nil {
		if apierrors.IsNotFound(err) {
			res.Outcome = OutcomeAbsent
			return res, nil
		}
		return res, fmt.Errorf("deleting mirror Secret %s: %w", res.Mirror, err)
	}
	res.Outcome = OutcomeRemoved
	return res, nil
}
