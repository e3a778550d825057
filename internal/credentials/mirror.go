package credentials

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
)

// EnsureMirror makes the mirror of identity in user's namespace current and
// makes user one of its owners. user is the TerraformCluster,
// TerraformMachine or TerraformMachinePool that uses the identity; the
// caller has already checked that the identity allows its namespace.
//
// The source Secret and the mirror are read through apiReader (uncached).
// The mirror is created as an Opaque Secret with a copy of the source's
// data, the labels captf.io/mirrored=true and captf.io/managed=true, the
// annotations captf.io/source-hash and captf.io/identity, and one
// non-controller owner reference per user (an earlier UID of the same user
// is replaced). Its data is rewritten only when the source hash differs;
// when nothing differs nothing is written. A Secret of the mirror's name
// that is not this identity's mirror is never modified: the result is
// OutcomeConflict. A missing source gives OutcomeSourceNotFound, missing
// requiredKeys OutcomeSourceIncomplete; neither writes the mirror.
func EnsureMirror(ctx context.Context, c client.Client, apiReader client.Reader, identity *infrav1.TerraformClusterIdentity, user client.Object) (Result, error) {
	res, ref, data, err := readSource(ctx, c, apiReader, identity, user)
	if err != nil || res.Outcome != "" {
		return res, err
	}
	retriable := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	err = retry.OnError(retry.DefaultRetry, retriable, func() error {
		var err error
		res, err = writeMirror(ctx, c, apiReader, res, data, ref)
		return err
	})
	return res, err
}

// CheckMirror is EnsureMirror without its write: it reads the source and
// the mirror (through apiReader) and returns what EnsureMirror would do:
// OutcomeCreated or OutcomeUpdated when a write is due, OutcomeUnchanged
// when none is, or the outcome that stops it (the source missing or
// incomplete, a conflict). It writes nothing.
func CheckMirror(ctx context.Context, c client.Client, apiReader client.Reader, identity *infrav1.TerraformClusterIdentity, user client.Object) (Result, error) {
	res, ref, data, err := readSource(ctx, c, apiReader, identity, user)
	if err != nil || res.Outcome != "" {
		return res, err
	}
	mirror := &corev1.Secret{}
	switch err := apiReader.Get(ctx, res.Mirror, mirror); {
	case apierrors.IsNotFound(err):
		res.Outcome, res.DataRewritten = OutcomeCreated, true
		return res, nil
	case err != nil:
		return res, fmt.Errorf("reading mirror Secret %s: %w", res.Mirror, err)
	}
	res, _ = reconcileMirror(mirror, res, data, ref)
	return res, nil
}

// readSource reads the identity's source Secret for user's mirror. Its
// result's Outcome is set when no mirror can be written (the source is
// missing or incomplete); data is the source's, for the mirror only.
func readSource(ctx context.Context, c client.Client, apiReader client.Reader, identity *infrav1.TerraformClusterIdentity, user client.Object) (Result, metav1.OwnerReference, map[string][]byte, error) {
	res := Result{
		Identity: identity.Name,
		Mirror:   types.NamespacedName{Namespace: user.GetNamespace(), Name: MirrorName(identity.Name)},
		Source:   types.NamespacedName{Namespace: identity.Spec.SecretRef.Namespace, Name: identity.Spec.SecretRef.Name},
	}
	ref, err := ownerRefTo(c, user)
	if err != nil {
		return res, ref, nil, err
	}
	source := &corev1.Secret{}
	if err := apiReader.Get(ctx, res.Source, source); err != nil {
		if apierrors.IsNotFound(err) {
			res.Outcome = OutcomeSourceNotFound
			return res, ref, nil, nil
		}
		return res, ref, nil, fmt.Errorf("reading source Secret %s of TerraformClusterIdentity %s: %w: %w", res.Source, identity.Name, ErrSourceUnreadable, err)
	}
	if missing := MissingKeys(identity.Spec.RequiredKeys, source.Data); len(missing) > 0 {
		res.Outcome, res.MissingKeys = OutcomeSourceIncomplete, missing
		return res, ref, nil, nil
	}
	res.SourceHash = SourceHash(source.Data)
	return res, ref, source.Data, nil
}

// writeMirror is one read-compare-write attempt of EnsureMirror.
func writeMirror(ctx context.Context, c client.Client, apiReader client.Reader, res Result, data map[string][]byte, ref metav1.OwnerReference) (Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("secret", res.Mirror, "identity", res.Identity)
	res.Outcome, res.DataRewritten, res.Conflict = "", false, ""

	mirror := &corev1.Secret{}
	err := apiReader.Get(ctx, res.Mirror, mirror)
	if apierrors.IsNotFound(err) {
		mirror = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:            res.Mirror.Name,
				Namespace:       res.Mirror.Namespace,
				Labels:          map[string]string{infrav1.MirroredLabel: "true", infrav1.ManagedLabel: "true"},
				Annotations:     map[string]string{infrav1.SourceHashAnnotation: res.SourceHash, infrav1.IdentityAnnotation: res.Identity},
				OwnerReferences: []metav1.OwnerReference{ref},
				Finalizers:      []string{protection.Finalizer},
			},
			Type: corev1.SecretTypeOpaque,
			Data: maps.Clone(data),
		}
		log.Info("Creating credentials mirror")
		if err := c.Create(ctx, mirror); err != nil {
			return res, fmt.Errorf("creating mirror Secret %s: %w", res.Mirror, err)
		}
		res.Outcome, res.DataRewritten = OutcomeCreated, true
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("reading mirror Secret %s: %w", res.Mirror, err)
	}
	res, changed := reconcileMirror(mirror, res, data, ref)
	if !changed {
		return res, nil
	}
	if res.DataRewritten {
		log.Info("Rewriting credentials mirror: the source Secret changed")
	} else {
		log.V(2).Info("Updating owner references of credentials mirror")
	}
	if err := c.Update(ctx, mirror); err != nil {
		return res, fmt.Errorf("updating mirror Secret %s: %w", res.Mirror, err)
	}
	return res, nil
}

// reconcileMirror brings the mirror as read to what it should be, in
// memory, and says whether it changed: OutcomeUpdated (to write) or
// OutcomeUnchanged, or OutcomeConflict for a Secret that is not the
// identity's mirror (left as read).
func reconcileMirror(mirror *corev1.Secret, res Result, data map[string][]byte, ref metav1.OwnerReference) (Result, bool) {
	res.Outcome, res.DataRewritten, res.Conflict = "", false, ""
	if ok, why := mirrorOf(mirror, res.Identity); !ok {
		res.Outcome, res.Conflict = OutcomeConflict, why
		return res, false
	}
	changed := false
	if mirror.Labels[infrav1.ManagedLabel] != "true" {
		mirror.Labels[infrav1.ManagedLabel] = "true"
		changed = true
	}
	if refs, refsChanged := withOwnerRef(mirror.OwnerReferences, ref); refsChanged {
		mirror.OwnerReferences = refs
		changed = true
	}
	// A destroy needs the mirror: the garbage collector takes it once
	// every user is being deleted with foreground propagation.
	changed = protection.Protect(mirror) || changed
	if mirror.Annotations[infrav1.SourceHashAnnotation] != res.SourceHash {
		mirror.Annotations[infrav1.SourceHashAnnotation] = res.SourceHash
		mirror.Data = maps.Clone(data)
		changed, res.DataRewritten = true, true
	}
	res.Outcome = OutcomeUnchanged
	if changed {
		res.Outcome = OutcomeUpdated
	}
	return res, changed
}

// ownerRefTo returns the non-controller, non-blocking owner reference a
// mirror holds to user.
func ownerRefTo(c client.Client, user client.Object) (metav1.OwnerReference, error) {
	gvk, err := apiutil.GVKForObject(user, c.Scheme())
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("finding the kind of %s: %w", client.ObjectKeyFromObject(user), err)
	}
	if user.GetUID() == "" {
		return metav1.OwnerReference{}, fmt.Errorf("%s %s has no UID; pass the object as read from the API server", gvk.Kind, client.ObjectKeyFromObject(user))
	}
	return metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Name:       user.GetName(),
		UID:        user.GetUID(),
	}, nil
}
