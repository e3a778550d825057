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

// Kept lists the Secrets deletionPolicy Retain keeps for obj (of kind; its
// state suffix) and a recreated object may adopt: the state, the input
// records, the plan key (it keys the inputs hash the state carries) and
// the state backups, read live, metadata only (retaining and adopting
// write no data, and Secrets that merely carry these labels must cost no
// memory).
func (k Keeper) Kept(ctx context.Context, obj client.Object, kind, suffix string) ([]metav1.PartialObjectMetadata, error) {
	ns := obj.GetNamespace()
	var out []metav1.PartialObjectMetadata
	for _, sel := range []client.ListOption{
		client.MatchingLabelsSelector{Selector: state.Selector(suffix)},
		client.MatchingLabels{infrav1.StateBackupSuffixLabel: suffix},
	} {
		list := state.SecretMetadataList()
		if err := k.Reader.List(ctx, list, client.InNamespace(ns), sel); err != nil {
			return nil, err
		}
		out = append(out, list.Items...)
	}
	for _, name := range []string{records.AttemptName(kind, obj.GetName()), records.AppliedName(kind, obj.GetName()), records.PlanKeyName(kind, obj.GetName())} {
		s := &metav1.PartialObjectMetadata{}
		s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := k.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	for i := range out {
		out[i].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	}
	return out, nil
}

// Retain hands obj's kept Secrets (Kept) to the user and returns how many:
// they lose obj's owner reference, so the garbage collector keeps them,
// and their protection, and are labelled with its UID
// (captf.io/retained-from-uid). A Secret already being deleted (a
// foreground or namespace deletion reached it) keeps its protection:
// without it, it would be gone.
func (k Keeper) Retain(ctx context.Context, obj client.Object, kind, suffix string) (int, error) {
	kept, err := k.Kept(ctx, obj, kind, suffix)
	if err != nil {
		return 0, err
	}
	for i := range kept {
		s := &kept[i]
		// Optimistic: a deletion that reached the Secret since it was read
		// must keep its protection.
		patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
		var refs []metav1.OwnerReference
		for _, r := range s.OwnerReferences {
			if r.UID != obj.GetUID() {
				refs = append(refs, r)
			}
		}
		s.OwnerReferences = refs
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[infrav1.RetainedFromUIDLabel] = string(obj.GetUID())
		if !protection.Terminating(s) {
			protection.Unprotect(s)
		}
		if err := k.Client.Patch(ctx, s, patch); err != nil && !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("retaining Secret %s: %w", s.Name, err)
		}
	}
	return len(kept), nil
}

// RetainedFrom returns the UID of the deleted object whose retained state
// secrets, obj's state Secrets, are ("" when they are obj's own).
func RetainedFrom(secrets []corev1.Secret, obj client.Object) string {
	for _, s := range secrets {
		if uid := s.Labels[infrav1.RetainedFromUIDLabel]; uid != "" && uid != string(obj.GetUID()) {
			return uid
		}
	}
	return ""
}

// Adopt makes the retained Secrets (Kept) of a deleted object of obj's
// name obj's (spec.adoptRetainedState): the retained-from label goes,
// each but the two input records (their next write owns them) takes obj's
// owner reference in place of the deleted object's, and each is
// protected.
func (k Keeper) Adopt(ctx context.Context, obj client.Object, kind, suffix string) error {
	kept, err := k.Kept(ctx, obj, kind, suffix)
	if err != nil {
		return err
	}
	for i := range kept {
		s := &kept[i]
		if s.Labels[infrav1.RetainedFromUIDLabel] == "" {
			continue
		}
		patch := client.MergeFrom(s.DeepCopy())
		delete(s.Labels, infrav1.RetainedFromUIDLabel)
		if s.Name != records.AttemptName(kind, obj.GetName()) && s.Name != records.AppliedName(kind, obj.GetName()) {
			s.OwnerReferences = append(OwnersOtherThan(s, obj), records.OwnerReference(obj, kind))
		}
		protection.Protect(s)
		if err := k.Client.Patch(ctx, s, patch); err != nil {
			return fmt.Errorf("adopting retained Secret %s: %w", s.Name, err)
		}
	}
	return nil
}
