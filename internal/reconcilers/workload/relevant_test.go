package workload

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// The watches of the objects a pass reads besides its own wake it for a
// change of what it reads, and only for that: a Cluster API object's
// status churn, or a TerraformCluster's own bookkeeping, wakes none of
// the objects that watch them.
func TestWatchesWakeOnWhatPassesRead(t *testing.T) {
	now := metav1.NewTime(time.Now())
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: now}
	cluster := func(edit func(*clusterv1.Cluster)) client.Object {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: "1", Labels: map[string]string{"a": "b"}}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	machine := func(edit func(*clusterv1.Machine)) client.Object {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", ResourceVersion: "1"}, Spec: clusterv1.MachineSpec{ClusterName: "c"}}
		if edit != nil {
			edit(m)
		}
		return m
	}
	pool := func(edit func(*clusterv1.MachinePool)) client.Object {
		mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: "1"}, Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To[int32](1)}}
		if edit != nil {
			edit(mp)
		}
		return mp
	}
	tc := func(edit func(*infrav1.TerraformCluster)) client.Object {
		c := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: "1"}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	for _, tt := range []struct {
		name       string
		watch      predicate.Predicate
		old, new   client.Object
		wantsAPass bool
	}{
		{"a Cluster's resync", clusterRead, cluster(nil), cluster(nil), false},
		{"a Cluster's conditions", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Status.Conditions, c.Status.Phase = "2", []metav1.Condition{cond}, "Provisioned"
		}), false},
		{"a Cluster's control plane initialized", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Status.Initialization.ControlPlaneInitialized = "2", ptr.To(true)
		}), true},
		{"a Cluster paused", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) { c.ResourceVersion, c.Spec.Paused = "2", ptr.To(true) }), true},
		{"a Cluster's annotation", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Annotations = "2", map[string]string{clusterv1.PausedAnnotation: ""}
		}), true},
		{"a Cluster deleted", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) { c.ResourceVersion, c.DeletionTimestamp = "2", &now }), true},
		{"a Machine's status", machineRead, machine(nil), machine(func(m *clusterv1.Machine) {
			m.ResourceVersion, m.Status.Conditions, m.Status.Phase = "2", []metav1.Condition{cond}, "Running"
		}), false},
		{"a Machine's bootstrap data", machineRead, machine(nil), machine(func(m *clusterv1.Machine) {
			m.ResourceVersion, m.Spec.Bootstrap.DataSecretName = "2", ptr.To("boot")
		}), true},
		{"a Machine's remediation annotation", machineRead, machine(nil), machine(func(m *clusterv1.Machine) {
			m.ResourceVersion, m.Annotations = "2", map[string]string{infrav1.RemediateMachineAnnotation: ""}
		}), true},
		{"a MachinePool's status", machinePoolRead, pool(nil), pool(func(mp *clusterv1.MachinePool) {
			mp.ResourceVersion, mp.Status.Conditions = "2", []metav1.Condition{cond}
		}), false},
		{"a MachinePool scaled", machinePoolRead, pool(nil), pool(func(mp *clusterv1.MachinePool) { mp.ResourceVersion, mp.Spec.Replicas = "2", ptr.To[int32](2) }), true},
		{"a TerraformCluster's Job and conditions", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) {
			c.ResourceVersion, c.Status.Conditions = "2", []metav1.Condition{cond}
			c.Status.ActiveJob = &infrav1.ActiveJob{Name: "j"}
			c.Status.LastRun = &infrav1.LastRun{}
			c.Status.StateBytes, c.Status.ObservedGeneration = 10, 3
		}), false},
		{"a TerraformCluster provisioned", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) {
			c.ResourceVersion, c.Status.Initialization.Provisioned = "2", ptr.To(true)
		}), true},
		{"a TerraformCluster's new state", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) {
			c.ResourceVersion, c.Status.ObservedStateSerial = "2", 4
		}), true},
		{"a TerraformCluster's defaults", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) {
			c.ResourceVersion, c.Generation, c.Spec.MaxActiveJobs = "2", 2, ptr.To[int32](3)
		}), true},
		{"a TerraformCluster deleted", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) { c.ResourceVersion, c.DeletionTimestamp = "2", &now }), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.watch.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.wantsAPass {
				t.Errorf("the update wakes a pass: %v, want %v", got, tt.wantsAPass)
			}
		})
	}
}
