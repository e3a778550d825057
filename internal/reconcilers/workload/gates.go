package workload

import (
	"context"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

// An object that waits at a gate (a Job slot, its run lease, its
// cluster's operation gate) is woken when a Job that may have held it
// finishes or goes, instead of at its next requeue: the cache indexes the
// objects by the gates their conditions say they wait at.
const (
	// gateIndex is the field index of the gates an object waits at.
	gateIndex = "captf.gateWaits"
	// slotGate: any finished Job may free a slot of the manager's limit.
	slotGate = "slot"
)

// clusterGate is the index key of the gates of a cluster: its operation
// gate and its objects' run leases.
func clusterGate(namespace, cluster string) string {
	return namespace + "/" + state.OwnerLabels("", "", cluster)[state.LabelClusterName]
}

// gatesOf lists the gates obj's conditions say it waits at.
func gatesOf(obj client.Object) []string {
	role := roles.Of(obj)
	if role == nil {
		return nil
	}
	var keys []string
	for _, c := range role.View(obj).Status.Conditions {
		switch c.Reason {
		case infrav1.WaitingForJobSlotReason:
			keys = append(keys, slotGate)
			if cluster := roles.ClusterNameOf(obj); cluster != "" {
				keys = append(keys, clusterGate(obj.GetNamespace(), cluster)) // the cluster's own limit
			}
		case infrav1.WaitingForRunLeaseReason, infrav1.WaitingForClusterOperationReason, infrav1.WaitingForMachineOperationsReason:
			if cluster := roles.ClusterNameOf(obj); cluster != "" {
				keys = append(keys, clusterGate(obj.GetNamespace(), cluster))
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// indexGates registers the gate index of each workload kind.
func indexGates(ctx context.Context, mgr ctrl.Manager) error {
	for _, role := range []roles.Role{roles.Cluster{}, roles.Machine{}, roles.MachinePool{}} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, role.New(), gateIndex, gatesOf); err != nil {
			return err
		}
	}
	return nil
}

// gateWaiters maps a Job that finished or went to the objects of list's
// kind that wait at a gate it may have held: every slot waiter, and the
// waiters of its cluster.
func gateWaiters(r client.Reader, list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		keys := []string{slotGate}
		if cluster := o.GetLabels()[state.LabelClusterName]; cluster != "" {
			keys = append(keys, o.GetNamespace()+"/"+cluster)
		}
		var reqs []reconcile.Request
		for _, key := range keys {
			l := list.DeepCopyObject().(client.ObjectList)
			if err := r.List(ctx, l, client.MatchingFields{gateIndex: key}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Listing the objects waiting at a gate", "gate", key)
				continue
			}
			_ = meta.EachListItem(l, func(item runtime.Object) error {
				reqs = append(reqs, requests(item.(client.Object))...)
				return nil
			})
		}
		slices.SortFunc(reqs, func(a, b reconcile.Request) int { return strings.Compare(a.String(), b.String()) })
		return slices.Compact(reqs)
	}
}

// jobReleased passes a CAPTF Job's update that finished it, and its
// deletion: the moments a gate it held may open.
var jobReleased = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	DeleteFunc:  func(e event.DeleteEvent) bool { return e.Object.GetLabels()[infrav1.ManagedLabel] == "true" },
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*batchv1.Job)
		after, ok2 := e.ObjectNew.(*batchv1.Job)
		if !ok1 || !ok2 || after.Labels[infrav1.ManagedLabel] != "true" {
			return false
		}
		was, _, _, _ := jobs.Finished(before)
		is, _, _, _ := jobs.Finished(after)
		return is && !was
	},
}
