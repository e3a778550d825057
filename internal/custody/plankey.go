package custody

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/pkg/state"
)

// The object's plan key (captf-plankey-<kindshort>-<name>, 32 random
// bytes, never rotated) keys its plan hashes (the runner reads it) and
// its inputs and approval hashes (the manager reads it), so that what a
// reader of its Jobs and TerraformPlans sees confirms no guess of a
// secret input. When to make one is the engine's.

// ReadPlanKey reads obj's plan key, live: nil when there is none yet, an
// error naming the way out when it is too short to key anything.
func (k Keeper) ReadPlanKey(ctx context.Context, obj client.Object, kind string) ([]byte, error) {
	name := records.PlanKeyName(kind, obj.GetName())
	s := &corev1.Secret{}
	err := k.Reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, s)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the plan key Secret %s: %w", name, err)
	}
	key := s.Data[records.PlanKeyData]
	if len(key) < inputs.MinKeyBytes {
		return nil, fmt.Errorf("the plan key Secret %s holds %d bytes under key, it needs %d: delete it and CAPTF makes a new one (the next apply then re-applies unchanged inputs once)",
			name, len(key), inputs.MinKeyBytes)
	}
	return key, nil
}

// WritePlanKey creates obj's plan key Secret holding key; a key that
// exists already is an AlreadyExists error, as the API server says it.
// In a namespace being deleted, which takes no new Secret, a deleting
// object keeps the key for its pass only: ephemeral, with no error.
//
// A key made for an object being deleted is not protected (and
// ProtectDeleting leaves plan keys alone): the pass may have read the
// object before another manager's cleanup released it, and a protected
// key made after that release would outlive its owner, held by
// captf.io/state-protection once the garbage collector deletes it, and
// hold its namespace's deletion for ever. Unprotected, it goes with its
// owner; it keys only that object's destroy.
func (k Keeper) WritePlanKey(ctx context.Context, obj client.Object, kind string, key []byte) (ephemeral bool, err error) {
	deleting := !obj.GetDeletionTimestamp().IsZero()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: records.PlanKeyName(kind, obj.GetName()),
			Labels:          map[string]string{infrav1.ManagedLabel: "true"},
			OwnerReferences: []metav1.OwnerReference{records.OwnerReference(obj, kind)}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{records.PlanKeyData: key},
	}
	if !deleting {
		protection.Protect(s)
	}
	err = k.Client.Create(ctx, s)
	switch {
	case apierrors.IsAlreadyExists(err):
		return false, err
	case apierrors.IsForbidden(err) && deleting:
		return true, nil
	case err != nil:
		return false, fmt.Errorf("creating the plan key Secret %s: %w", s.Name, err)
	}
	return false, nil
}

// DeletePlanKey releases and deletes obj's plan key, unless it was
// retained with the state (it keys the inputs hash the state carries).
func (k Keeper) DeletePlanKey(ctx context.Context, obj client.Object, kind string) error {
	notRetained, _ := labels.NewRequirement(infrav1.RetainedFromUIDLabel, selection.DoesNotExist, nil)
	if err := protection.DeleteEach(ctx, k.Client, k.Reader, state.SecretMetadataList(), client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{"metadata.name": records.PlanKeyName(kind, obj.GetName())},
		client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*notRetained)}); err != nil {
		return fmt.Errorf("deleting the plan key Secret: %w", err)
	}
	return nil
}
