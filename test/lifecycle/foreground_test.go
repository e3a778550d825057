package lifecycle_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestForegroundDeletionDestroysWithTheKeptState: deleted with foreground
// propagation (kubectl delete --cascade=foreground), an owner's dependents
// are deleted by the garbage collector at once, the state Secrets, records
// and credentials mirror of the objects still to be destroyed among them.
// They stay, readable, until CAPTF's cleanup; the destroy Jobs (which their
// objects do not own, or the garbage collector would stop them) destroy
// every resource the states held; and nothing is left.
func TestForegroundDeletionDestroysWithTheKeptState(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "terraform")
	k := kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	tm := w.newMachine("m-0")
	tmp := w.newPool("pool", 2)
	w.waitProvisioned(tm)
	w.waitProvisioned(tmp)
	resources := map[string]int{}
	for _, o := range []struct{ kind, name string }{{state.KindCluster, tc.Name}, {state.KindMachine, tm.Name}, {state.KindMachinePool, tmp.Name}} {
		n := w.stateInstances(o.kind, o.name)
		if n == 0 {
			t.Fatalf("%s %s holds no resource: nothing to prove a destroy with", o.kind, o.name)
		}
		resources[state.KindShort(o.kind)+"-"+o.name] = n
	}

	// The machine is paused first: its deletion waits, so the garbage
	// collector reaches its state before its destroy does. (Unpaused, a
	// destroy of a provider-free module can finish, and its cleanup delete
	// the state it no longer needs, before the garbage collector comes.)
	w.annotate(tm, infrav1.PausedAnnotation, "")

	// The Machine and the MachinePool, whose infrastructure objects the
	// garbage collector deletes, and the TerraformCluster itself (its
	// Cluster stays: without Cluster API here, nothing would keep the
	// Cluster until its machines are gone, and they inherit their
	// deletionPolicy through it).
	foreground := client.PropagationPolicy(metav1.DeletePropagationForeground)
	for _, owner := range []client.Object{
		&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tm.Name}},
		&clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tmp.Name}},
		&infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tc.Name}},
	} {
		if err := env.Client.Delete(t.Context(), owner, foreground); err != nil {
			t.Fatal(err)
		}
	}
	// The garbage collector reaches the machine's state before its
	// destroy: it stays, readable, and the unpaused machine's destroy
	// uses it.
	suffix, _ := state.Suffix(w.ns, state.KindMachine, tm.Name)
	w.eventually(3*time.Minute, "the machine's state Secret deleted by the garbage collector, and kept", func() (bool, error) {
		s := &corev1.Secret{}
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: state.SecretName(suffix)}, s)
		if apierrors.IsNotFound(err) {
			t.Fatal("the machine's state Secret is gone before its destroy")
		}
		if err != nil || s.DeletionTimestamp != nil {
			return err == nil, err
		}
		// The collector may leave the paused machine's state to the
		// machine's removal (envtest.DeleteAsTheCollector).
		deleted, err := envtest.DeleteAsTheCollector(t.Context(), env.Client, tm, s)
		if deleted {
			t.Logf("the garbage collector left %s to the machine's removal: deleted as it does when it comes first", s.Name)
		}
		return false, err
	})
	w.update(tm, func(o client.Object) { delete(o.GetAnnotations(), infrav1.PausedAnnotation) })
	for _, obj := range []client.Object{tm, tmp, tc} {
		w.eventually(3*time.Minute, obj.GetName()+" destroyed and gone", func() (bool, error) {
			err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
	for prefix, n := range resources {
		if !slices.ContainsFunc(k.Runs(), func(r kubelet.Run) bool {
			return r.Namespace == w.ns && strings.HasPrefix(r.Job, "captf-"+prefix+"-destroy-") && r.ExitCode == 0 &&
				r.Result.Changes != nil && r.Result.Changes.Destroy == n
		}) {
			t.Errorf("no destroy Job captf-%s-destroy-* destroyed the %d resources of its state", prefix, n)
		}
	}
	w.wantNothingLeft()
}

// stateInstances reads an object's state from its Secrets, as the manager
// does, and counts the resource instances a destroy deletes.
func (w *world) stateInstances(kind, name string) int {
	w.t.Helper()
	suffix, err := state.Suffix(w.ns, kind, name)
	if err != nil {
		w.t.Fatal(err)
	}
	var list corev1.SecretList
	if err := env.Client.List(w.t.Context(), &list, client.InNamespace(w.ns), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
		w.t.Fatal(err)
	}
	_, raw, err := state.DecodeRaw(suffix, list.Items)
	if err != nil {
		w.t.Fatalf("reading the state of %s %s: %v", kind, name, err)
	}
	n, err := state.ManagedInstances(raw)
	if err != nil {
		w.t.Fatal(err)
	}
	return n
}
