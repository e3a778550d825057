package workload

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
)

// A pass reads a few fields of the objects its object's controller
// watches besides it; their status changes many times while they are
// worked on (conditions, counters, the Job of the moment), and a pass
// costs a dozen live reads. So each of these watches lets through an
// update only when what a pass reads of the object changed: each
// predicate below drops what a pass never reads and compares the rest.
// Any other change, a field added later among them, still wakes it. A
// resync changes nothing either: each object's own informer resyncs it
// once a --sync-period, and the secondary watches would make that two or
// three passes.

// readChanged passes an update of a T whose asRead differs.
func readChanged[T client.Object](asRead func(T) T) predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(T)
			after, ok2 := e.ObjectNew.(T)
			if !ok1 || !ok2 {
				return true
			}
			return !equality.Semantic.DeepEqual(asRead(before), asRead(after))
		},
	}
}

// The watches of the owner kinds compare what a pass reads of them
// (internal/roles: ClusterAsRead, MachineAsRead, MachinePoolAsRead,
// InfraAsRead), the fields the confirmation of a cached owner compares
// too.
var (
	clusterRead     = readChanged(roles.ClusterAsRead)
	machineRead     = readChanged(roles.MachineAsRead)
	machinePoolRead = readChanged(roles.MachinePoolAsRead)
)

// memberReadOfCluster: what the passes of a cluster's machines and pools
// read of its Cluster API Cluster: spec.paused and the infrastructure
// reference that names their TerraformCluster. Only such an update wakes
// them (not the Cluster's creation or deletion, which reach them through
// their Machine, MachinePool or TerraformCluster).
var memberReadOfCluster = predicate.And(updatesOnly, readChanged(func(c *clusterv1.Cluster) *clusterv1.Cluster {
	return &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: c.Spec.Paused, InfrastructureRef: c.Spec.InfrastructureRef}}
}))

// updatesOnly passes updates only.
var updatesOnly = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// readByMembers: what the passes of a TerraformCluster's machines and
// pools read of it (roles.InfraAsRead). A member waiting at the cluster
// operation gate is woken by the release of the cluster's Job
// (gateWaiters), and by the cluster's block-move annotation going when
// its pass records the Job (metadata: kept), not by the cluster's status.
// A cluster's state repaired at the same serial (only its conditions
// change) reaches a member waiting for its exports at that wait's requeue
// (30 s).
var readByMembers = readChanged(roles.InfraAsRead)

// jobRead: what a pass reads of its object's Jobs (jobs.AsRead): three or
// four updates a Job (its pod counters, the conditions just before its
// end) carry nothing of it.
var jobRead = readChanged(jobs.AsRead)

// podPull: what a pass reads of its running Job's pod (checkActive)
// that no Job event tells: its runner init container or module container
// starting or ceasing to wait for an image it cannot pull
// (jobs.ImagePullFailing). The pass then
// reports ImagePullFailed at once, and clears it once the image came,
// rather than at the running Job's requeue (a minute). The kubelet's
// turns between ErrImagePull and ImagePullBackOff, and every other update
// of the pod, wake nothing; the grace after which the Job is stopped is
// the pass's own requeue. A pod first seen already failing (the cache's
// first list, after a manager start or a relist) wakes its object too; a
// pod's deletion wakes nothing: its Job's events tell what matters.
var podPull = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return pullFailing(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return pullFailing(e.ObjectOld) != pullFailing(e.ObjectNew) },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func pullFailing(o client.Object) bool {
	pod, ok := o.(*corev1.Pod)
	return ok && jobs.ImagePullFailing(pod) != nil
}
