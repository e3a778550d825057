package runs

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// SweepOrphans deletes, with their pods, the Jobs without an owner
// reference (those of a deleting object) that name key, an object of
// kind found gone: the ones its release did not delete because the
// manager stopped between removing the finalizer and deleting them. A
// manager sharded by watchFilter sweeps only its shard's. obj is an empty
// object of kind: the object is read into it again after the Jobs are
// listed, and a Job naming the UID of an object that exists by then is
// kept.
func (k Keeper) SweepOrphans(ctx context.Context, kind string, key client.ObjectKey, watchFilter string, obj client.Object) error {
	selector := client.MatchingLabels(state.OwnerSelector(kind, key.Name))
	if watchFilter != "" {
		selector[infrav1.WatchFilterLabel] = watchFilter // a gone object of another shard is not ours to sweep
	}
	var list batchv1.JobList
	if err := k.Client.List(ctx, &list, client.InNamespace(key.Namespace), selector); err != nil {
		return fmt.Errorf("listing the Jobs of %s %s: %w", kind, key, err)
	}
	var orphans []*batchv1.Job
	for i := range list.Items {
		j := &list.Items[i]
		if metav1.GetControllerOf(j) == nil && j.Annotations[infrav1.OwnerAnnotation] == key.Name && j.DeletionTimestamp.IsZero() {
			orphans = append(orphans, j)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	// The NotFound that found the object gone may be older than the list:
	// a pass woken by the Machine before its TerraformMachine was created
	// lists the Jobs made since for the new object. Read after listing, an
	// object that exists keeps the Jobs that name its UID.
	if err := k.Reader.Get(ctx, key, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading %s %s again: %w", kind, key, err)
	}
	for _, j := range orphans {
		if uid := j.Annotations[infrav1.OwnerUIDAnnotation]; obj.GetUID() != "" && (uid == "" || uid == string(obj.GetUID())) {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Deleting a Job whose object is gone", "job", j.Name)
		if err := k.Delete(ctx, j); err != nil {
			return fmt.Errorf("deleting Job %s: %w", j.Name, err)
		}
	}
	return nil
}
