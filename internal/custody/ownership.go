package custody

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
)

// Keeper writes the Secrets in an object's custody.
type Keeper struct {
	// Client writes Secrets.
	Client client.Client
	// Reader lists them live (Secrets are never cached).
	Reader client.Reader
}

// HasOwner: s is owned by obj (its UID).
func HasOwner(s metav1.Object, obj client.Object) bool {
	for _, r := range s.GetOwnerReferences() {
		if r.UID == obj.GetUID() {
			return true
		}
	}
	return false
}

// OwnersOtherThan drops the references of s to earlier objects of obj's
// name (an earlier UID).
func OwnersOtherThan(s metav1.Object, obj client.Object) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, r := range s.GetOwnerReferences() {
		if r.Name != obj.GetName() || r.UID == obj.GetUID() {
			out = append(out, r)
		}
	}
	return out
}

// Unkept: s is obj's (not retained for another object) and lacks its
// owner reference or, unless being deleted, its protection.
func Unkept(s *corev1.Secret, obj client.Object) bool {
	if s.Labels[infrav1.RetainedFromUIDLabel] != "" {
		return false
	}
	return !HasOwner(s, obj) || (!protection.Protected(s) && !protection.Terminating(s))
}

// Reown gives obj (of kind) its owner reference and protection on
// secrets, keeping their other owners, and returns how many it re-owned.
// A Secret changed or deleted meanwhile is left to the next pass.
func (k Keeper) Reown(ctx context.Context, obj client.Object, kind string, secrets []*corev1.Secret) (int, error) {
	n := 0
	for _, s := range secrets {
		patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if !HasOwner(s, obj) {
			s.OwnerReferences = append(OwnersOtherThan(s, obj), records.OwnerReference(obj, kind))
		}
		protection.Protect(s)
		if err := k.Client.Patch(ctx, s, patch); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				continue
			}
			return n, fmt.Errorf("re-owning Secret %s: %w", s.Name, err)
		}
		n++
	}
	return n, nil
}

// UnkeptOf are the Secrets of secrets that are Unkept for obj.
func UnkeptOf(secrets []corev1.Secret, obj client.Object) []*corev1.Secret {
	var out []*corev1.Secret
	for i := range secrets {
		if Unkept(&secrets[i], obj) {
			out = append(out, &secrets[i])
		}
	}
	return out
}

// UnkeptRecords reads obj's inputs records and plan key live and returns
// those that are Unkept (a state owned by an earlier UID says the object
// was re-created, a restore or a move: its other Secrets are owned by
// that UID too).
func (k Keeper) UnkeptRecords(ctx context.Context, obj client.Object, kind string) ([]*corev1.Secret, error) {
	var out []*corev1.Secret
	for _, name := range []string{records.AttemptName(kind, obj.GetName()), records.AppliedName(kind, obj.GetName()), records.PlanKeyName(kind, obj.GetName())} {
		s := &corev1.Secret{}
		if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, s); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		if Unkept(s, obj) {
			out = append(out, s)
		}
	}
	return out, nil
}
