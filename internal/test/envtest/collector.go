package envtest

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteAsTheCollector deletes dependent, which owner owns without
// blocking its deletion, when owner was deleted with foreground
// propagation and the garbage collector will not delete dependent while
// owner exists. Deleting such an owner, the collector deletes its
// dependents and, no blocking one left, removes the owner's
// foregroundDeletion finalizer: two work items, run concurrently. When the
// finalizer goes first, a dependent whose owner still exists (held by a
// finalizer, a paused object) waits for the owner's removal instead. This
// does what the collector does when it reaches the dependent first, once
// the owner shows it will not; it reports whether it deleted dependent.
func DeleteAsTheCollector(ctx context.Context, c client.Client, owner, dependent client.Object) (bool, error) {
	o := owner.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(owner), o); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if o.GetDeletionTimestamp() == nil || slices.Contains(o.GetFinalizers(), metav1.FinalizerDeleteDependents) {
		return false, nil // the collector is still at it
	}
	if err := c.Delete(ctx, dependent); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return true, nil
}
