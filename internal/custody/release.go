package custody

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/crashpoint"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/pkg/state"
)

// ReleaseState deletes, in order and one by one, what obj's state was
// kept in, once obj is released: its state Secrets (found by label), the
// state lock and its input records, when the state is obj's own
// (ownState; an object released on state another object retained touches
// none of it), then its plan key (unless retained with the state:
// DeletePlanKey). Every protected Secret loses the protection as it goes.
// Its backups are ReleaseBackups'.
func (k Keeper) ReleaseState(ctx context.Context, obj client.Object, kind, suffix string, ownState bool) error {
	ns := obj.GetNamespace()
	if ownState {
		if err := protection.DeleteEach(ctx, k.Client, k.Reader, state.SecretMetadataList(), client.InNamespace(ns), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
			return fmt.Errorf("deleting the state Secrets: %w", err)
		}
		crashpoint.Hit(crashpoint.DuringCleanup)
		lock := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: state.LockLeaseName(suffix)}}
		if err := k.Client.Delete(ctx, lock); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Lease %s: %w", lock.Name, err)
		}
		if err := records.Delete(ctx, k.Client, k.Reader, ns, kind, obj.GetName()); err != nil {
			return fmt.Errorf("deleting the input records: %w", err)
		}
	}
	return k.DeletePlanKey(ctx, obj, kind)
}
