package roles_test

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

// TestCapabilities: each kind answers the engine's questions as the
// lifecycle documents it, and the lookups agree on the kind.
func TestCapabilities(t *testing.T) {
	testCases := []struct {
		kind    string
		obj     any
		mutable bool
		want    roles.Capabilities
	}{
		{kind: state.KindCluster, obj: &infrav1.TerraformCluster{}, mutable: true,
			want: roles.Capabilities{Dependents: true, GuardsEveryApply: true, ShortName: "tfc"}},
		{kind: state.KindMachine, obj: &infrav1.TerraformMachine{}, mutable: false,
			want: roles.Capabilities{RefreshesAfterApply: true, ShortName: "tfm"}},
		{kind: state.KindMachinePool, obj: &infrav1.TerraformMachinePool{}, mutable: true,
			want: roles.Capabilities{GuardsExports: true, RefreshesAfterApply: true, ReadyFollowsApplies: true, SyncsOwner: true, ShortName: "tfmp"}},
	}
	for _, tc := range testCases {
		t.Run(tc.kind, func(t *testing.T) {
			r, ok := roles.ForKind(tc.kind)
			if !ok {
				t.Fatalf("no role for %s", tc.kind)
			}
			if got := r.Capabilities(); got != tc.want {
				t.Errorf("capabilities %+v, want %+v", got, tc.want)
			}
			if step := r.After(r.New(), roles.Owner{}); !r.Capabilities().SyncsOwner && (step.Patch != nil || len(step.Conditions) > 0 || len(step.Events) > 0) {
				t.Errorf("After of a kind that does not sync its owner wants %+v: the engine never runs it", step)
			}
			if r.Kind() != tc.kind || r.Mutable() != tc.mutable {
				t.Errorf("kind %s mutable %v, want %s %v", r.Kind(), r.Mutable(), tc.kind, tc.mutable)
			}
			if of := roles.Of(r.New()); of == nil || of.Kind() != tc.kind {
				t.Errorf("Of(New()) is %v, want the %s role", of, tc.kind)
			}
			if planned := r.Capabilities().Planned(); planned != (tc.kind != state.KindMachine) {
				t.Errorf("planned %v: only clusters and pools have TerraformPlans", planned)
			}
		})
	}
	if _, ok := roles.ForKind("TerraformSomething"); ok {
		t.Error("an unknown kind has a role")
	}
}

// TestSyncAutoscaling: a pool's after-step reports AutoscalingActive and
// asks for the MachinePool write-back it needs, writing nothing itself and
// leaving the owner it was given as it was.
func TestSyncAutoscaling(t *testing.T) {
	both := map[string]string{infrav1.AutoscalerMinSizeAnnotation: "1", infrav1.AutoscalerMaxSizeAnnotation: "5"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range []map[string]string{both, extra} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	testCases := []struct {
		name        string
		ann         map[string]string
		replicas    *int32
		observed    *int32
		noOwner     bool
		mismatch    bool
		wantReason  string
		wantEvent   string
		wantPatch   bool
		wantManager string // on the patched MachinePool
		wantSize    *int32 // on the patched MachinePool
	}{
		{name: "no MachinePool", noOwner: true, wantReason: infrav1.AutoscalingDisabledReason},
		{name: "MachinePool does not reference the pool back", mismatch: true, ann: both, observed: ptr.To[int32](3), wantReason: infrav1.AutoscalingDisabledReason},
		{name: "no annotations", replicas: ptr.To[int32](2), observed: ptr.To[int32](3), wantReason: infrav1.AutoscalingDisabledReason},
		{name: "only a minimum", ann: map[string]string{infrav1.AutoscalerMinSizeAnnotation: "1"}, wantReason: infrav1.AutoscalingAnnotationsInvalidReason},
		{name: "min above max", ann: map[string]string{infrav1.AutoscalerMinSizeAnnotation: "4", infrav1.AutoscalerMaxSizeAnnotation: "2"}, wantReason: infrav1.AutoscalingAnnotationsInvalidReason},
		{name: "another manager", ann: with(map[string]string{infrav1.ReplicasManagedByAnnotation: "karpenter"}), observed: ptr.To[int32](3),
			wantReason: infrav1.ReplicasManagedExternallyReason, wantEvent: "ReplicasManagedExternally"},
		{name: "observed replicas written back and marked", ann: both, replicas: ptr.To[int32](2), observed: ptr.To[int32](3),
			wantReason: infrav1.ReplicasManagedByModuleReason, wantEvent: "ReplicasWrittenBack", wantPatch: true, wantManager: roles.ReplicasManager, wantSize: ptr.To[int32](3)},
		{name: "already in step", ann: with(map[string]string{infrav1.ReplicasManagedByAnnotation: roles.ReplicasManager}), replicas: ptr.To[int32](3), observed: ptr.To[int32](3),
			wantReason: infrav1.ReplicasManagedByModuleReason},
		{name: "nothing observed yet: only the mark", ann: both, replicas: ptr.To[int32](2),
			wantReason: infrav1.ReplicasManagedByModuleReason, wantPatch: true, wantManager: roles.ReplicasManager, wantSize: ptr.To[int32](2)},
		{name: "autoscaling turned off: the mark goes", ann: map[string]string{infrav1.ReplicasManagedByAnnotation: roles.ReplicasManager}, replicas: ptr.To[int32](3),
			wantReason: infrav1.AutoscalingDisabledReason, wantPatch: true, wantSize: ptr.To[int32](3)},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tmp := &infrav1.TerraformMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool"}}
			tmp.Status.Replicas = tc.observed
			mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool", Annotations: tc.ann},
				Spec: clusterv1.MachinePoolSpec{Replicas: tc.replicas}}
			owner := roles.Owner{Mismatch: tc.mismatch}
			if !tc.noOwner {
				owner.Object = mp
			}
			before := mp.DeepCopy()
			step := roles.MachinePool{}.After(tmp, owner)
			if len(step.Conditions) != 1 || step.Conditions[0].Type != infrav1.AutoscalingActiveCondition || step.Conditions[0].Reason != tc.wantReason {
				t.Fatalf("conditions %+v, want AutoscalingActive/%s", step.Conditions, tc.wantReason)
			}
			var events []string
			for _, ev := range step.Events {
				events = append(events, ev.Reason)
				if ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
					t.Errorf("event %s has type %q", ev.Reason, ev.Type)
				}
			}
			if (tc.wantEvent == "" && len(events) != 0) || (tc.wantEvent != "" && (len(events) != 1 || events[0] != tc.wantEvent)) {
				t.Errorf("events %v, want %q", events, tc.wantEvent)
			}
			if got, _ := json.Marshal(mp); string(got) != string(must(json.Marshal(before))) {
				t.Errorf("the owner given was changed: %s", got)
			}
			if (step.Patch != nil) != tc.wantPatch {
				t.Fatalf("patch %v, want one: %v", step.Patch, tc.wantPatch)
			}
			if step.Patch == nil {
				return
			}
			if step.PatchBase != mp {
				t.Error("the patch is not based on the owner as read")
			}
			patched := step.Patch.(*clusterv1.MachinePool)
			if got := patched.Annotations[infrav1.ReplicasManagedByAnnotation]; got != tc.wantManager {
				t.Errorf("replicas-managed-by %q, want %q", got, tc.wantManager)
			}
			if !ptr.Equal(patched.Spec.Replicas, tc.wantSize) {
				t.Errorf("spec.replicas %v, want %v", ptr.Deref(patched.Spec.Replicas, -1), ptr.Deref(tc.wantSize, -1))
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestSettle: the kinds' own status after the shared one: a provisioned
// cluster says whether it has an endpoint, a pool mirrors provisioned in
// status.ready, a machine has nothing of its own.
func TestSettle(t *testing.T) {
	provisioned := func(tc *infrav1.TerraformCluster) *infrav1.TerraformCluster {
		tc.Status.Initialization.Provisioned = ptr.To(true)
		return tc
	}
	withEndpoint := provisioned(&infrav1.TerraformCluster{})
	withEndpoint.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.1", Port: 6443}
	testCases := []struct {
		name       string
		role       roles.Role
		obj        client.Object
		wantReason string // "": no condition
	}{
		{"an unprovisioned cluster says nothing yet", roles.Cluster{}, &infrav1.TerraformCluster{}, ""},
		{"a provisioned cluster without an endpoint waits for one", roles.Cluster{}, provisioned(&infrav1.TerraformCluster{}), infrav1.WaitingForEndpointReason},
		{"a provisioned cluster with an endpoint has it", roles.Cluster{}, withEndpoint, infrav1.EndpointAvailableReason},
		{"a machine has nothing of its own", roles.Machine{}, &infrav1.TerraformMachine{}, ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			conds := tc.role.Settle(tc.obj)
			switch {
			case tc.wantReason == "" && len(conds) != 0:
				t.Errorf("Settle = %+v, want no condition", conds)
			case tc.wantReason != "" && (len(conds) != 1 || conds[0].Type != infrav1.EndpointAvailableCondition || conds[0].Reason != tc.wantReason):
				t.Errorf("Settle = %+v, want EndpointAvailable/%s", conds, tc.wantReason)
			}
		})
	}
	pool := &infrav1.TerraformMachinePool{}
	pool.Status.Initialization.Provisioned = ptr.To(true)
	if conds := (roles.MachinePool{}).Settle(pool); len(conds) != 0 || pool.Status.Ready == nil || !*pool.Status.Ready {
		t.Errorf("pool Settle = %+v, status.ready %v; want no condition and ready true", conds, pool.Status.Ready)
	}
}

// TestManualView: only a TerraformCluster's applyPolicy Manual makes
// every apply wait for an approved plan.
func TestManualView(t *testing.T) {
	tc := &infrav1.TerraformCluster{Spec: infrav1.TerraformClusterSpec{ApplyPolicy: infrav1.ApplyPolicyManual}}
	if !(roles.Cluster{}).View(tc).Manual {
		t.Error("a Manual TerraformCluster's view is not Manual")
	}
	if (roles.Cluster{}).View(&infrav1.TerraformCluster{}).Manual {
		t.Error("a TerraformCluster without applyPolicy is Manual")
	}
}

// TestOwnerSame: two lookups of an owner agree when they read the same
// objects as the roles read them: a status write or a new resourceVersion
// alone leaves the owner the same; a spec, label, annotation, a recreated
// or missing object, or a TerraformCluster provisioned does not.
func TestOwnerSame(t *testing.T) {
	cluster := func(change func(*clusterv1.Cluster)) *clusterv1.Cluster {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "c", ResourceVersion: "7"}}
		if change != nil {
			change(c)
		}
		return c
	}
	machine := func(change func(*clusterv1.Machine)) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", UID: "m", ResourceVersion: "5"}, Spec: clusterv1.MachineSpec{ClusterName: "c"}}
		if change != nil {
			change(m)
		}
		return m
	}
	infra := func(change func(*infrav1.TerraformCluster)) *infrav1.TerraformCluster {
		tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "tc", ResourceVersion: "3"}}
		if change != nil {
			change(tc)
		}
		return tc
	}
	base := roles.Owner{Object: machine(nil), Cluster: cluster(nil), Infra: infra(nil)}
	testCases := []struct {
		name  string
		other roles.Owner
		same  bool
	}{
		{name: "the same objects", other: roles.Owner{Object: machine(nil), Cluster: cluster(nil), Infra: infra(nil)}, same: true},
		{name: "a Machine status write", same: true, other: roles.Owner{Cluster: cluster(nil), Infra: infra(nil), Object: machine(func(m *clusterv1.Machine) {
			m.ResourceVersion, m.Status.Phase = "6", "Provisioning"
			m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "capi"}}
		})}},
		{name: "a cached copy, which carries its kind", same: true, other: roles.Owner{Object: machine(func(m *clusterv1.Machine) {
			m.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Machine"))
		}), Cluster: cluster(func(c *clusterv1.Cluster) { c.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Cluster")) }), Infra: infra(nil)}},
		{name: "a Machine's provider ID, copied by Cluster API", same: true, other: roles.Owner{Cluster: cluster(nil), Infra: infra(nil), Object: machine(func(m *clusterv1.Machine) {
			m.ResourceVersion, m.Generation, m.Spec.ProviderID = "6", 2, "noop://m"
		})}},
		{name: "a Cluster status write", same: true, other: roles.Owner{Object: machine(nil), Infra: infra(nil), Cluster: cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Status.Phase = "8", "Provisioned"
		})}},
		{name: "a TerraformCluster's conditions", same: true, other: roles.Owner{Object: machine(nil), Cluster: cluster(nil), Infra: infra(func(tc *infrav1.TerraformCluster) {
			tc.ResourceVersion, tc.Status.PendingRefreshes = "4", 1
		})}},
		{name: "a Cluster's control plane initialized", other: roles.Owner{Object: machine(nil), Infra: infra(nil), Cluster: cluster(func(c *clusterv1.Cluster) {
			c.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		})}},
		{name: "a TerraformCluster's new exports", other: roles.Owner{Object: machine(nil), Cluster: cluster(nil), Infra: infra(func(tc *infrav1.TerraformCluster) {
			tc.Status.Exports = &apiextensionsv1.JSON{Raw: []byte(`{"vpc":"a"}`)}
		})}},
		{name: "a paused Cluster", other: roles.Owner{Object: machine(nil), Infra: infra(nil), Cluster: cluster(func(c *clusterv1.Cluster) {
			c.Spec.Paused = ptr.To(true)
		})}},
		{name: "a recreated Cluster", other: roles.Owner{Object: machine(nil), Infra: infra(nil), Cluster: cluster(func(c *clusterv1.Cluster) { c.UID = "c2" })}},
		{name: "a Machine annotated", other: roles.Owner{Cluster: cluster(nil), Infra: infra(nil), Object: machine(func(m *clusterv1.Machine) {
			m.Annotations = map[string]string{clusterv1.RemediateMachineAnnotation: ""}
		})}},
		{name: "a Machine being deleted", other: roles.Owner{Cluster: cluster(nil), Infra: infra(nil), Object: machine(func(m *clusterv1.Machine) {
			m.DeletionTimestamp = &metav1.Time{}
		})}},
		{name: "a TerraformCluster provisioned", other: roles.Owner{Object: machine(nil), Cluster: cluster(nil), Infra: infra(func(tc *infrav1.TerraformCluster) {
			tc.Status.Initialization.Provisioned = ptr.To(true)
		})}},
		{name: "a TerraformCluster's deletion policy", other: roles.Owner{Object: machine(nil), Cluster: cluster(nil), Infra: infra(func(tc *infrav1.TerraformCluster) {
			tc.Spec.DeletionPolicy = infrav1.DeletionPolicyRetain
		})}},
		{name: "no Cluster", other: roles.Owner{Object: machine(nil), Infra: infra(nil)}},
		{name: "no owner", other: roles.Owner{Cluster: cluster(nil), Infra: infra(nil)}},
		{name: "no TerraformCluster", other: roles.Owner{Object: machine(nil), Cluster: cluster(nil)}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := base.Same(tc.other); got != tc.same {
				t.Errorf("Same = %t, want %t", got, tc.same)
			}
			if got := tc.other.Same(base); got != tc.same {
				t.Errorf("Same, the other way = %t, want %t", got, tc.same)
			}
		})
	}
	if !(roles.Owner{}).Same(roles.Owner{}) {
		t.Error("two lookups that found nothing differ")
	}
}

// TestOwnerProblem: a lookup that would stop or hold the object reports a
// problem (and is made again live before it is believed).
func TestOwnerProblem(t *testing.T) {
	fine := roles.Owner{Object: &clusterv1.Machine{}, Cluster: &clusterv1.Cluster{}, Infra: &infrav1.TerraformCluster{}}
	if fine.Problem() {
		t.Error("a found, matching, unpaused owner with its TerraformCluster reports a problem")
	}
	for name, change := range map[string]func(*roles.Owner){
		"not ready":           func(o *roles.Owner) { o.NotReady = &metav1.Condition{} },
		"mismatch":            func(o *roles.Owner) { o.Mismatch = true },
		"paused":              func(o *roles.Owner) { o.Paused = true },
		"ownerless":           func(o *roles.Owner) { o.Ownerless = true },
		"no TerraformCluster": func(o *roles.Owner) { o.Infra = nil },
	} {
		o := fine
		change(&o)
		if !o.Problem() {
			t.Errorf("%s: no problem reported", name)
		}
	}
}
