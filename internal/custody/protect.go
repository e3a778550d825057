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
	"captf.io/captf/pkg/state"
)

// ReleaseBackups lets obj's state backups (its state suffix's) go with
// it: they keep their owner reference and lose their protection. A set
// nothing owns (one the runner rescued while obj was being deleted) would
// never go: it is deleted. A set retained for another object stays.
func (k Keeper) ReleaseBackups(ctx context.Context, obj client.Object, suffix string) error {
	backups := state.SecretMetadataList()
	if err := k.Reader.List(ctx, backups, client.InNamespace(obj.GetNamespace()), BackupSets(suffix)); err != nil {
		return fmt.Errorf("listing the state backups: %w", err)
	}
	for i := range backups.Items {
		b := &backups.Items[i]
		if b.Labels[infrav1.RetainedFromUIDLabel] != "" {
			continue
		}
		b.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
		var err error
		if HasOwner(b, obj) {
			err = protection.Release(ctx, k.Client, b)
		} else {
			err = protection.Delete(ctx, k.Client, b)
		}
		if err != nil {
			return fmt.Errorf("releasing state backup: %w", err)
		}
	}
	return nil
}

// ReleaseSurplus lets go of state pieces Terraform deleted while shrinking
// the state, which the protection still kept.
func (k Keeper) ReleaseSurplus(ctx context.Context, surplus []corev1.Secret) error {
	for i := range surplus {
		if err := protection.Release(ctx, k.Client, &surplus[i]); err != nil {
			return fmt.Errorf("releasing surplus state piece: %w", err)
		}
	}
	return nil
}

// ProtectDeleting protects, for obj (of kind; its state suffix) being
// deleted, its state pieces (pieces, as read), backups and input records
// that lack the protection and are not being deleted yet: pieces an
// interrupted apply created, a set the runner rescued, Secrets written
// before CAPTF protected them. Their owner references are left as they
// are (a deleting object's state is cleaned up or retained, never
// re-owned); a retained Secret is not obj's. The plan key is left alone:
// one made while the object is being deleted must stay unprotected, and
// one made before is protected already. A Secret gone or changed meanwhile
// is left to the next pass.
func (k Keeper) ProtectDeleting(ctx context.Context, obj client.Object, kind, suffix string, pieces []corev1.Secret) error {
	ns := obj.GetNamespace()
	list := state.SecretMetadataList()
	if err := k.Reader.List(ctx, list, client.InNamespace(ns), BackupSets(suffix)); err != nil {
		return fmt.Errorf("listing the state backups: %w", err)
	}
	candidates := list.Items
	for i := range pieces {
		candidates = append(candidates, metav1.PartialObjectMetadata{ObjectMeta: pieces[i].ObjectMeta})
	}
	for _, name := range []string{records.AttemptName(kind, obj.GetName()), records.AppliedName(kind, obj.GetName())} {
		s := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
		if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		candidates = append(candidates, *s)
	}
	for i := range candidates {
		s := &candidates[i]
		if s.Labels[infrav1.RetainedFromUIDLabel] != "" || protection.Protected(s) || protection.Terminating(s) {
			continue
		}
		s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
		base := s.DeepCopy()
		protection.Protect(s)
		if err := k.Client.Patch(ctx, s, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				continue // gone, or changed: the next pass looks again
			}
			return fmt.Errorf("protecting Secret %s: %w", s.Name, err)
		}
	}
	return nil
}
