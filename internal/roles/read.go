package roles

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// What a pass reads of the objects its owner lookup returns. Their status
// changes many times while they are worked on (conditions, counters, the
// Job of the moment); a pass reads a few fields of it. The watches that
// wake a pass (internal/reconcilers/workload) and the confirmation of a
// cached owner (Owner.Same) compare these, so that both follow the same
// fields: a field added to what a pass reads is added here.

// ClusterAsRead is what a TerraformCluster's pass reads of its Cluster
// API Cluster: its metadata (deletion, finalizers, labels, annotations,
// owners), its spec (pause, endpoint, network, topology version) and
// status.initialization.controlPlaneInitialized (a module input), not the
// rest of its status (conditions, replica counters, phase, the
// infrastructure provisioned flag Cluster API copies from the
// TerraformCluster), which Cluster API rewrites as machines come and go.
// A machine's or pool's pass reads less of it (its pause and
// infrastructure reference).
func ClusterAsRead(c *clusterv1.Cluster) *clusterv1.Cluster {
	r := &clusterv1.Cluster{ObjectMeta: *c.ObjectMeta.DeepCopy(), Spec: *c.Spec.DeepCopy()}
	if cpi := c.Status.Initialization.ControlPlaneInitialized; cpi != nil {
		r.Status.Initialization.ControlPlaneInitialized = ptr.To(*cpi)
	}
	return Unversioned(r)
}

// MachineAsRead is what a TerraformMachine's pass reads of its Machine:
// its metadata (owners, remediation annotations, deletion) and spec
// (bootstrap data Secret, version, failure domain, infrastructure
// reference), none of its status, nor spec.providerID, which Cluster API
// copies from the TerraformMachine (the pass wrote it there).
func MachineAsRead(m *clusterv1.Machine) *clusterv1.Machine {
	r := &clusterv1.Machine{ObjectMeta: *m.ObjectMeta.DeepCopy(), Spec: *m.Spec.DeepCopy()}
	r.Spec.ProviderID = ""
	return Unversioned(r)
}

// MachinePoolAsRead is what a TerraformMachinePool's pass reads of its
// MachinePool: its metadata (autoscaler annotations, deletion) and spec
// (replicas, template, failure domains), none of its status, nor
// spec.providerIDList, which Cluster API copies from the
// TerraformMachinePool.
func MachinePoolAsRead(mp *clusterv1.MachinePool) *clusterv1.MachinePool {
	r := &clusterv1.MachinePool{ObjectMeta: *mp.ObjectMeta.DeepCopy(), Spec: *mp.Spec.DeepCopy()}
	r.Spec.ProviderIDList = nil
	return Unversioned(r)
}

// InfraAsRead is what the passes of a TerraformCluster's machines and
// pools read of it: its metadata, its spec (defaults, policies, the Job
// limit) and the status it hands down (provisioned, the state serial its
// exports come from, the exports, failure domains, the state's Secrets),
// not its own bookkeeping (conditions, activeJob, lastRun, drift and
// refresh times, backups, its module source, its pending plan).
func InfraAsRead(tc *infrav1.TerraformCluster) *infrav1.TerraformCluster {
	r := tc.DeepCopy()
	s := &r.Status
	s.Conditions, s.ObservedGeneration = nil, 0
	s.ActiveJob, s.LastRun, s.LastDriftCheck, s.LastRefresh = nil, nil, nil, nil
	s.PendingRefreshes, s.StateBytes, s.StateBackups, s.Source, s.PendingPlanRef = 0, 0, nil, nil, nil
	return Unversioned(r)
}

// Unversioned clears what every write changes (the resourceVersion and
// the managed fields), the generation (which follows the spec, compared
// itself: a spec field no pass reads, such as the provider ID Cluster API
// copies to a Machine, moves it too) and the kind, which a cache's copy
// carries and a live read's does not.
func Unversioned[T client.Object](o T) T {
	o.SetResourceVersion("")
	o.SetManagedFields(nil)
	o.SetGeneration(0)
	o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return o
}

// asRead is what a pass reads of an owner lookup's object; nil for nil.
func asRead(obj client.Object) client.Object {
	switch o := obj.(type) {
	case nil:
		return nil
	case *clusterv1.Machine:
		return MachineAsRead(o)
	case *clusterv1.MachinePool:
		return MachinePoolAsRead(o)
	case *clusterv1.Cluster:
		return ClusterAsRead(o)
	case *infrav1.TerraformCluster:
		return InfraAsRead(o)
	}
	return Unversioned(obj.DeepCopyObject().(client.Object))
}

// Same reports whether two lookups found the same owner: the same owner,
// Cluster and TerraformCluster (or both absent), each as a pass reads it.
// A status write to the owner, which Cluster API makes often, does not
// make it another owner; a pause, a new spec, label or annotation, a
// deletion, a TerraformCluster provisioned or with new exports, do.
func (o Owner) Same(other Owner) bool {
	return equality.Semantic.DeepEqual(asRead(o.Object), asRead(other.Object)) &&
		equality.Semantic.DeepEqual(asRead(clusterObject(o.Cluster)), asRead(clusterObject(other.Cluster))) &&
		equality.Semantic.DeepEqual(asRead(infraObject(o.Infra)), asRead(infraObject(other.Infra)))
}

// clusterObject and infraObject turn a nil pointer into a nil interface.
func clusterObject(c *clusterv1.Cluster) client.Object {
	if c == nil {
		return nil
	}
	return c
}

func infraObject(tc *infrav1.TerraformCluster) client.Object {
	if tc == nil {
		return nil
	}
	return tc
}
