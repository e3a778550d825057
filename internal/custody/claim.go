package custody

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/pkg/state"
)

// ClaimState makes the state a Job wrote (suffix) obj's, read live: hash,
// the inputs hash of the apply that wrote it, goes on its base Secret
// (with an optimistic lock), and every piece takes obj's owner reference
// and protection. exact (a restore) also removes the hash when hash is
// "": the restored state's inputs are unknown. hashed: the base Secret
// took a new hash.
func (k Keeper) ClaimState(ctx context.Context, obj client.Object, kind, suffix, hash string, exact bool) (hashed bool, err error) {
	// Metadata only: claiming writes no data, and Secrets that merely
	// carry the state's labels must cost no memory.
	list := state.SecretMetadataList()
	if err := k.Reader.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
		return false, err
	}
	for i := range list.Items {
		s := &list.Items[i]
		s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
		patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
		changed := false
		if s.Name == state.SecretName(suffix) && (hash != "" || exact) && s.Annotations[infrav1.InputsHashAnnotation] != hash {
			if s.Annotations == nil {
				s.Annotations = map[string]string{}
			}
			s.Annotations[infrav1.InputsHashAnnotation] = hash
			if hash == "" {
				delete(s.Annotations, infrav1.InputsHashAnnotation)
			}
			changed, hashed = true, hash != ""
		}
		if !HasOwner(s, obj) {
			s.OwnerReferences = append(OwnersOtherThan(s, obj), records.OwnerReference(obj, kind))
			changed = true
		}
		changed = protection.Protect(s) || changed
		if changed {
			if err := k.Client.Patch(ctx, s, patch); err != nil {
				return hashed, fmt.Errorf("adopting state Secret %s: %w", s.Name, err)
			}
		}
	}
	return hashed, nil
}
