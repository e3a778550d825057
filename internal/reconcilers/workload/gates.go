package workload

import (
	"context"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// finishes or goes while running, instead of at its next requeue: the
// cache indexes the objects by the gates their conditions say they wait
// at. A Job wakes at most wakePerGate waiters of each gate, those waiting
// longest, so that a fleet of waiters is not woken whole by every Job;
// the others keep their requeue.
const (
	// gateIndex is the field index of the gates an object waits at.
	gateIndex = "captf.gateWaits"
	// slotGate: any finished Job may free a slot of the manager's limit.
	slotGate = "slot"
	// wakePerGate bounds the waiters of one gate a Job wakes.
	wakePerGate = 8
)

// clusterGate is the index key of the gates of a cluster: its operation
// gate and its objects' run leases.
func clusterGate(namespace, cluster string) string {
	return namespace + "/" + state.OwnerLabels("", "", cluster)[state.LabelClusterName]
}

// gatesOf lists the gates obj's conditions say it waits at: none while a
// Job of it runs (a wait reason may outlive its wait on the condition).
func gatesOf(obj client.Object) []string {
	role := roles.Of(obj)
	if role == nil {
		return nil
	}
	st := role.View(obj).Status
	if st.ActiveJob != nil {
		return nil
	}
	cluster := roles.ClusterNameOf(obj)
	var keys []string
	for _, c := range st.Conditions {
		if !gateWait(c) {
			continue
		}
		if c.Reason == infrav1.WaitingForJobSlotReason {
			keys = append(keys, slotGate)
		}
		// Every gate wait may end with a Job of the cluster: its lease,
		// its operation gate, its own Job limit.
		if cluster != "" {
			keys = append(keys, clusterGate(obj.GetNamespace(), cluster))
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
// kind that wait longest at a gate it may have held: slot waiters (not
// for a Job of another shard: each shard counts its own slots), and the
// waiters of its cluster.
func gateWaiters(r client.Reader, list client.ObjectList, shardValue string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var keys []string
		if shardValue == "" || o.GetLabels()[infrav1.WatchFilterLabel] == shardValue {
			keys = append(keys, slotGate)
		}
		if cluster := o.GetLabels()[state.LabelClusterName]; cluster != "" {
			keys = append(keys, jobs.ObjectNamespace(o)+"/"+cluster)
		}
		var reqs []reconcile.Request
		for _, key := range keys {
			l := list.DeepCopyObject().(client.ObjectList)
			if err := r.List(ctx, l, client.MatchingFields{gateIndex: key}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Listing the objects waiting at a gate", "gate", key)
				continue
			}
			var waiters []client.Object
			_ = meta.EachListItem(l, func(item runtime.Object) error {
				waiters = append(waiters, item.(client.Object))
				return nil
			})
			slices.SortFunc(waiters, func(a, b client.Object) int { return waitingSince(a).Compare(waitingSince(b)) })
			reqs = append(reqs, requests(waiters[:min(len(waiters), wakePerGate)]...)...)
		}
		slices.SortFunc(reqs, func(a, b reconcile.Request) int { return strings.Compare(a.String(), b.String()) })
		return slices.Compact(reqs)
	}
}

// waitingSince is when obj's oldest gate wait began.
func waitingSince(obj client.Object) time.Time {
	var since time.Time
	for _, c := range roles.Of(obj).View(obj).Status.Conditions {
		if gateWait(c) && (since.IsZero() || c.LastTransitionTime.Time.Before(since)) {
			since = c.LastTransitionTime.Time
		}
	}
	return since
}

// gateWait: c reports a wait at a gate (such a wait is Unknown).
func gateWait(c metav1.Condition) bool {
	switch c.Reason {
	case infrav1.WaitingForJobSlotReason, infrav1.WaitingForRunLeaseReason, infrav1.WaitingForClusterOperationReason, infrav1.WaitingForMachineOperationsReason:
		return c.Status == metav1.ConditionUnknown
	}
	return false
}

// jobReleased passes a CAPTF Job's update that finished it, and the
// deletion of one still running: the moments a gate it held may open (a
// finished Job pruned or collected frees nothing).
var jobReleased = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	DeleteFunc: func(e event.DeleteEvent) bool {
		j, ok := e.Object.(*batchv1.Job)
		if !ok || j.Labels[infrav1.ManagedLabel] != "true" {
			return false
		}
		finished, _, _, _ := jobs.Finished(j)
		return !finished
	},
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
