package workload

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
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
		{"a Cluster's conditions, for its members", memberReadOfCluster, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Status.Conditions, c.Status.Initialization.ControlPlaneInitialized = "2", []metav1.Condition{cond}, ptr.To(true)
		}), false},
		{"a Cluster paused, for its members", memberReadOfCluster, cluster(nil), cluster(func(c *clusterv1.Cluster) { c.ResourceVersion, c.Spec.Paused = "2", ptr.To(true) }), true},
		{"a Cluster unpaused, for its members", memberReadOfCluster, cluster(func(c *clusterv1.Cluster) { c.Spec.Paused = ptr.To(true) }),
			cluster(func(c *clusterv1.Cluster) { c.ResourceVersion, c.Spec.Paused = "2", ptr.To(false) }), true},
		{"a Cluster pointed at another TerraformCluster, for its members", memberReadOfCluster, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Spec.InfrastructureRef = "2", clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "TerraformCluster", Name: "other"}
		}), true},
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
			if strings.HasSuffix(tt.name, "for its members") && tt.watch.Create(event.CreateEvent{Object: tt.new}) {
				t.Error("a Cluster's creation wakes its members: they are woken by their Machine, MachinePool or TerraformCluster")
			}
			if got := tt.watch.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.wantsAPass {
				t.Errorf("the update wakes a pass: %v, want %v", got, tt.wantsAPass)
			}
		})
	}
}

// A Cluster paused or unpaused wakes, on the real API server's objects,
// the machines and pools of that cluster in its namespace, and no other.
func TestPausedMembers(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	meta := clusterMember
	source := infrav1.SourceSpec{Image: "local/noop:tofu"}
	createAll(t, []string{"pause-a", "pause-b"},
		&infrav1.TerraformMachine{ObjectMeta: meta("pause-a", "a-0", "a"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachine{ObjectMeta: meta("pause-a", "other-0", "other"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachine{ObjectMeta: meta("pause-b", "a-0", "a"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachinePool{ObjectMeta: meta("pause-a", "a-pool", "a"), Spec: infrav1.TerraformMachinePoolSpec{Source: source}},
	)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "pause-a", Name: "a"}}
	for _, tc := range []struct {
		list client.ObjectList
		want []string
	}{
		{&infrav1.TerraformMachineList{}, []string{"pause-a/a-0"}},
		{&infrav1.TerraformMachinePoolList{}, []string{"pause-a/a-pool"}},
	} {
		var got []string
		for _, r := range pausedMembers(env.Client, tc.list)(ctx, cluster) {
			got = append(got, r.String())
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%T: woken %v, want %v", tc.list, got, tc.want)
		}
	}
}
