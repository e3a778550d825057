package lifecycle_test

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/gates"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestRetainKeepsStateForTheNextObject: deletionPolicy Retain releases a
// machine without a destroy and keeps its state, records and backups; a
// machine recreated with the same name holds on that state until it
// adopts it, then reads it as its own without re-applying.
func TestRetainKeepsStateForTheNextObject(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	k := kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	tm := w.newMachine("m-0")
	w.update(tm, func(o client.Object) {
		o.(*infrav1.TerraformMachine).Spec.DeletionPolicy = infrav1.DeletionPolicyRetain
	})
	w.waitProvisioned(tm)
	providerID, firstUID := tm.Spec.ProviderID, tm.UID

	w.deleteMachine(tm)
	if slices.ContainsFunc(k.Runs(), func(r kubelet.Run) bool { return r.Op == "destroy" && r.Namespace == w.ns }) {
		t.Fatal("a Retain machine ran a destroy")
	}
	suffix, _ := state.Suffix(w.ns, state.KindMachine, "m-0")
	var kept corev1.SecretList
	if err := env.Client.List(t.Context(), &kept, client.InNamespace(w.ns), client.MatchingLabels{infrav1.RetainedFromUIDLabel: string(firstUID)}); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range kept.Items {
		names[s.Name] = true
		if len(s.OwnerReferences) != 0 {
			t.Errorf("retained Secret %s still has owners %v: the garbage collector would delete it", s.Name, s.OwnerReferences)
		}
	}
	for _, want := range []string{state.SecretName(suffix), "captf-inputs-m-m-0", "captf-applied-m-m-0", "captf-plankey-m-m-0"} {
		if !names[want] {
			t.Errorf("Secret %s was not retained (kept: %v)", want, names)
		}
	}

	// A new machine of the same name holds on the retained state.
	tm2 := w.newMachine("m-0")
	w.eventually(time.Minute, "RetainedStateFound", func() (bool, error) {
		w.get(tm2)
		c := conditionOf(tm2, infrav1.StateReadableCondition)
		return c != nil && c.Reason == infrav1.RetainedStateFoundReason, nil
	})
	// The first machine's Jobs go with the garbage collector, in its own
	// time: count only the new machine's.
	ownJobs := func(op string) int {
		return len(slices.DeleteFunc(w.jobsOf(state.KindMachine, "m-0", op), func(j batchv1.Job) bool { return !metav1.IsControlledBy(&j, tm2) }))
	}
	if n := ownJobs(""); n != 0 {
		t.Errorf("a machine holding on retained state started %d Jobs", n)
	}
	w.update(tm2, func(o client.Object) { o.(*infrav1.TerraformMachine).Spec.AdoptRetainedState = ptr.To(true) })
	w.waitProvisioned(tm2)
	if tm2.Spec.ProviderID != providerID {
		t.Errorf("the adopted machine reads provider ID %q, want the retained %q", tm2.Spec.ProviderID, providerID)
	}
	if n := ownJobs("apply"); n != 0 {
		t.Errorf("the adopting machine ran %d applies, want none: the state was applied", n)
	}
	w.waitEvent(tm2.Name, "RetainedStateAdopted")
	w.wantStateAdopted(state.KindMachine, tm2)
}

// deleteMachine deletes a machine as Cluster API does (the Machine, then
// the TerraformMachine) and waits until it is gone.
func (w *world) deleteMachine(tm *infrav1.TerraformMachine) {
	w.t.Helper()
	if err := env.Client.Delete(w.t.Context(), &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tm.Name}}); err != nil {
		w.t.Fatal(err)
	}
	if err := env.Client.Delete(w.t.Context(), tm); err != nil {
		w.t.Fatal(err)
	}
	w.eventually(2*time.Minute, tm.Name+" gone", func() (bool, error) {
		err := env.Client.Get(w.t.Context(), client.ObjectKeyFromObject(tm), &infrav1.TerraformMachine{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// TestARetainedClusterLeavesNoLease: deletionPolicy Retain releases a
// TerraformCluster without a destroy and leaves none of its Leases behind,
// the cluster lease included (a cluster waiting for its machines'
// operations holds it under a Job that never ran), as a destroyed one
// does; its state is kept. Before, it deleted only its run lease, and the
// cluster lease stayed in a namespace still in use.
func TestARetainedClusterLeavesNoLease(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	k := kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.DeletionPolicy = infrav1.DeletionPolicyRetain })
	w.waitProvisioned(tc)
	// A machine of another cluster keeps the namespace in use: the orphan
	// sweep, which empties a namespace without CAPTF objects, leaves it
	// alone.
	w.create(&infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "elsewhere-0", Labels: map[string]string{infrav1.ClusterNameLabel: "elsewhere"}},
		Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: "example.test/machine:1"}}})

	labels := state.OwnerLabels(state.KindCluster, tc.Name, w.cluster)
	labels[infrav1.LeaseLabel] = "cluster"
	now := metav1.NewMicroTime(time.Now())
	held := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: gates.ClusterLeaseName(w.ns, w.cluster), Labels: labels},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(tc.Name + "-apply-a9-000000"), LeaseDurationSeconds: ptr.To[int32](4500), AcquireTime: &now, RenewTime: &now}}
	if err := env.Client.Create(t.Context(), held); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	w.eventually(2*time.Minute, "the retained cluster gone", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(tc), &infrav1.TerraformCluster{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if w.destroyed(k, state.KindCluster, tc.Name) {
		t.Error("a Retain cluster ran a destroy")
	}
	var leases coordinationv1.LeaseList
	if err := env.Client.List(t.Context(), &leases, client.InNamespace(w.ns), client.MatchingLabels(state.OwnerSelector(state.KindCluster, tc.Name))); err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		// The state's lock (no lease label) is the runtime's, kept with
		// the state for the object that adopts it.
		if kind := l.Labels[infrav1.LeaseLabel]; kind != "" {
			t.Errorf("the %s Lease %s of the retained cluster is left behind", kind, l.Name)
		}
	}
	suffix, _ := state.Suffix(w.ns, state.KindCluster, tc.Name)
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: state.SecretName(suffix)}, &corev1.Secret{}); err != nil {
		t.Errorf("the retained cluster's state: %v; want it kept", err)
	}
}
