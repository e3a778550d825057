package workload

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
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

// clusterRead: what a TerraformCluster's pass reads of its Cluster API
// Cluster: its metadata (deletion, finalizers, labels, annotations,
// owners), its spec (pause, endpoint, network, topology version) and
// status.initialization (controlPlaneInitialized is a module input), not
// the rest of its status (conditions, replica counters, phase), which
// Cluster API rewrites as machines come and go.
var clusterRead = readChanged(func(c *clusterv1.Cluster) *clusterv1.Cluster {
	r := &clusterv1.Cluster{ObjectMeta: *c.ObjectMeta.DeepCopy(), Spec: *c.Spec.DeepCopy()}
	r.Status.Initialization = *c.Status.Initialization.DeepCopy()
	return unversioned(r)
})

// machineRead: what a TerraformMachine's pass reads of its Machine: its
// metadata (owners, remediation annotations, deletion) and spec
// (bootstrap data Secret, version, failure domain, infrastructure
// reference), none of its status.
var machineRead = readChanged(func(m *clusterv1.Machine) *clusterv1.Machine {
	return unversioned(&clusterv1.Machine{ObjectMeta: *m.ObjectMeta.DeepCopy(), Spec: *m.Spec.DeepCopy()})
})

// machinePoolRead: what a TerraformMachinePool's pass reads of its
// MachinePool: its metadata (autoscaler annotations, deletion) and spec
// (replicas, template, failure domains), none of its status.
var machinePoolRead = readChanged(func(mp *clusterv1.MachinePool) *clusterv1.MachinePool {
	return unversioned(&clusterv1.MachinePool{ObjectMeta: *mp.ObjectMeta.DeepCopy(), Spec: *mp.Spec.DeepCopy()})
})

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
// pools read of it: its metadata, its spec (defaults, policies, the Job
// limit) and the status it hands down (provisioned, the state serial its
// exports come from, the exports, failure domains, the state's Secrets),
// not its own bookkeeping (conditions, activeJob, lastRun, drift and
// refresh times, backups, its module source, its pending plan). A member
// waiting at the cluster operation gate is woken by the release of the
// cluster's Job (gateWaiters), and by the cluster's block-move annotation
// going when its pass records the Job (metadata: kept), not by the
// cluster's status. A cluster's state repaired at the same serial (only
// its conditions change) reaches a member waiting for its exports at
// that wait's requeue (30 s).
var readByMembers = readChanged(func(tc *infrav1.TerraformCluster) *infrav1.TerraformCluster {
	r := tc.DeepCopy()
	s := &r.Status
	s.Conditions, s.ObservedGeneration = nil, 0
	s.ActiveJob, s.LastRun, s.LastDriftCheck, s.LastRefresh = nil, nil, nil, nil
	s.PendingRefreshes, s.StateBytes, s.StateBackups, s.Source, s.PendingPlanRef = 0, 0, nil, nil, nil
	return unversioned(r)
})

// jobRead: what a pass reads of its object's Jobs: their metadata (the
// operation, the attempt, the bookkept mark, the image annotations,
// deletion), their spec, and of their status the Complete and Failed
// conditions that say how they ended (jobs.Finished) and the completion
// time; not the pod counters the Job controller writes as the pod is
// created, becomes ready and ends, nor the SuccessCriteriaMet or
// FailureTarget conditions that come just before the end: three or four
// updates a Job. A pass reads the running Job's pod itself, at its
// requeue (checkActive).
var jobRead = readChanged(func(j *batchv1.Job) *batchv1.Job {
	r := &batchv1.Job{ObjectMeta: *j.ObjectMeta.DeepCopy(), Spec: *j.Spec.DeepCopy()}
	r.Status.CompletionTime = j.Status.CompletionTime
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			r.Status.Conditions = append(r.Status.Conditions, c)
		}
	}
	return unversioned(r)
})

// unversioned clears what every write changes.
func unversioned[T client.Object](o T) T {
	o.SetResourceVersion("")
	o.SetManagedFields(nil)
	return o
}
