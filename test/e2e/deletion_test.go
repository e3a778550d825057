package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/evacuation"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// The deletion paths a user or a tool can take, each on real Jobs: every
// one ends with each object destroyed by a Job that destroys exactly the
// resources its state held (the state survived the deletion, and the
// destroy rendered the recorded inputs), and nothing of CAPTF left; or,
// where no Job can run (a deleted namespace), held with a condition that
// names the way out, the state kept.

// machineAndPool are the quickstart's objects of one machine and the pool.
var machineAndPool = []string{
	"Secret/quickstart-cp-0-bootstrap", "Machine/quickstart-cp-0", "TerraformMachine/quickstart-cp-0",
	"Secret/quickstart-pool-bootstrap", "MachinePool/quickstart-pool", "TerraformMachinePool/quickstart-pool",
}

// onePool are the quickstart's objects of its machine pool.
var onePool = []string{"Secret/quickstart-pool-bootstrap", "MachinePool/quickstart-pool", "TerraformMachinePool/quickstart-pool"}

// oneMachine are the quickstart's objects of its worker machine.
var oneMachine = []string{"Secret/quickstart-worker-0-bootstrap", "Machine/quickstart-worker-0", "TerraformMachine/quickstart-worker-0"}

// deleteClusterWith deletes the Cluster with one propagation policy, as
// `kubectl delete cluster --cascade=<policy>` and GitOps tools do.
func deleteClusterWith(policy metav1.DeletionPropagation, rt string, parts []string) func(t *testing.T, ctx context.Context, f *flow) {
	return func(t *testing.T, ctx context.Context, f *flow) {
		objs := pick(f.quickstart(rt), append(f.base(), parts...)...)
		resources := f.provision(ctx, objs)
		f.deleteWith(ctx, objs, "Cluster", "quickstart", policy)
		f.waitDestroyed(ctx, resources, rt)
		f.deleteRest(ctx, objs)
	}
}

// deleteOwnerWith deletes one Machine or MachinePool with a propagation
// policy: its infrastructure object is destroyed, then the Cluster goes as
// usual.
func deleteOwnerWith(kind, name string, policy metav1.DeletionPropagation, rt string, parts []string) func(t *testing.T, ctx context.Context, f *flow) {
	return func(t *testing.T, ctx context.Context, f *flow) {
		objs := pick(f.quickstart(rt), append(f.base(), parts...)...)
		resources := f.provision(ctx, objs)
		f.deleteWith(ctx, objs, kind, name, policy)
		infra := "Terraform" + kind + "/" + name
		f.waitDestroyed(ctx, map[string]int{infra: resources[infra]}, rt)
		delete(resources, infra)
		f.teardown(ctx, objs, rt)
	}
}

// deleteInfraFirst deletes the TerraformCluster itself with foreground
// propagation while its Cluster and machine live: the garbage collector
// deletes its state Secrets at once, which stay, readable; the cluster
// is destroyed once the Cluster goes.
func deleteInfraFirst(rt string) func(t *testing.T, ctx context.Context, f *flow) {
	return func(t *testing.T, ctx context.Context, f *flow) {
		objs := pick(f.quickstart(rt), append(f.base(), oneMachine...)...)
		f.provision(ctx, objs)
		f.deleteWith(ctx, objs, "TerraformCluster", "quickstart", metav1.DeletePropagationForeground)
		suffix := f.suffix(state.KindCluster, "quickstart")
		f.waitFor(ctx, "the garbage collector deleted the cluster's state Secrets, which stay readable", controllerWait, func(ctx context.Context) (bool, string, error) {
			var list corev1.SecretList
			if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
				return false, "", err
			}
			if len(list.Items) == 0 {
				return false, "the state Secrets are gone", fmt.Errorf("state lost")
			}
			for _, s := range list.Items {
				if s.DeletionTimestamp == nil {
					return false, s.Name + " is not being deleted yet", f.deleteAsTheCollector(ctx, &s)
				}
			}
			_, err := state.Decode(suffix, list.Items)
			return err == nil, fmt.Sprintf("decode: %v", err), nil
		})
		f.teardown(ctx, objs, rt)
	}
}

// deleteAsTheCollector deletes a state Secret of the quickstart's
// TerraformCluster, deleted with foreground propagation, when the garbage
// collector leaves it to the cluster's removal (envtest.DeleteAsTheCollector).
func (f *flow) deleteAsTheCollector(ctx context.Context, s *corev1.Secret) error {
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "quickstart"}}
	deleted, err := envtest.DeleteAsTheCollector(ctx, f.env.Client, tc, s)
	if deleted {
		f.t.Logf("the garbage collector left %s to the cluster's removal: deleted as it does when it comes first", s.Name)
	}
	return err
}

// deleteNamespace deletes the whole namespace: Kubernetes refuses new
// Jobs there, so each object's destroy runs in an evacuation namespace of
// its own, with its recorded inputs and its state copied there and back
// (the machine's first: the cluster waits for its dependents). Then the
// namespace goes by itself, the evacuation namespaces with it, and nothing
// of CAPTF is left.
func deleteNamespace(rt string) func(t *testing.T, ctx context.Context, f *flow) {
	return func(t *testing.T, ctx context.Context, f *flow) {
		objs := pick(f.quickstart(rt), append(f.base(), oneMachine...)...)
		resources := f.provision(ctx, objs)
		f.deleteWith(ctx, objs, "Namespace", f.ns, metav1.DeletePropagationBackground)
		f.waitDestroyed(ctx, resources, rt)
		f.evacuatedDestroys(resources)
		f.evacuationsGone(ctx, objs)
	}
}

// evacuatedDestroys checks that every destroy of the objects of resources
// ran in an evacuation namespace, one per object.
func (f *flow) evacuatedDestroys(resources map[string]int) {
	f.t.Helper()
	seen := map[string]string{}
	for key := range resources {
		kind, name, _ := strings.Cut(key, "/")
		for _, r := range f.runs(kind, name, string(infrav1.OperationDestroy)) {
			if !evacuation.IsName(r.Namespace) {
				f.t.Errorf("%s: a destroy ran in namespace %s, not in an evacuation namespace", key, r.Namespace)
			}
			if other, ok := seen[r.Namespace]; ok && other != key {
				f.t.Errorf("%s and %s both ran in the evacuation namespace %s", key, other, r.Namespace)
			}
			seen[r.Namespace] = key
		}
	}
}

// evacuationsGone waits until the flow's namespace and the evacuation
// namespaces its Jobs ran in are gone, then deletes the rest and checks
// that nothing is left.
func (f *flow) evacuationsGone(ctx context.Context, objs []*unstructured.Unstructured) {
	f.t.Helper()
	namespaces := map[string]bool{f.ns: true}
	for _, r := range f.env.Node.Runs() {
		if evacuation.IsName(r.Namespace) && r.Labels[infrav1.OwnerNamespaceLabel] == f.ns {
			namespaces[r.Namespace] = true
		}
	}
	f.waitFor(ctx, "the namespace and the evacuation namespaces are gone", controllerWait, func(ctx context.Context) (bool, string, error) {
		for ns := range namespaces {
			err := f.env.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
			if !apierrors.IsNotFound(err) {
				return false, "namespace " + ns + " is still there", client.IgnoreNotFound(err)
			}
		}
		return true, "", nil
	})
	f.deleteRest(ctx, objs)
}

// provision creates objs and waits until they are provisioned
// (waitProvisioned).
func (f *flow) provision(ctx context.Context, objs []*unstructured.Unstructured) map[string]int {
	f.t.Helper()
	f.create(ctx, objs)
	return f.waitProvisioned(ctx, objs)
}

// waitProvisioned waits until every TerraformCluster, TerraformMachine and
// TerraformMachinePool among objs is provisioned; it returns the number of
// resources each one's state holds, by kind/name.
func (f *flow) waitProvisioned(ctx context.Context, objs []*unstructured.Unstructured) map[string]int {
	f.t.Helper()
	out := map[string]int{}
	for _, o := range objs {
		if !slices.Contains([]string{"TerraformCluster", "TerraformMachine", "TerraformMachinePool"}, o.GetKind()) {
			continue
		}
		key := o.GetKind() + "/" + o.GetName()
		f.waitFor(ctx, key+" is provisioned", jobWait, func(ctx context.Context) (bool, string, error) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(o.GroupVersionKind())
			if _, err := f.get(ctx, o.GetName(), u); err != nil {
				return false, "", err
			}
			prov, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "provisioned")
			if !prov {
				return false, "not provisioned", nil
			}
			n, err := f.instances(ctx, o.GetKind(), o.GetName())
			if err != nil {
				return false, "", err
			}
			out[key] = n
			return n > 0, fmt.Sprintf("%d resources", n), nil
		})
	}
	return out
}

// instances reads an object's state and counts the resource instances a
// destroy deletes.
func (f *flow) instances(ctx context.Context, kind, name string) (int, error) {
	_, raw, err := f.readState(ctx, kind, name)
	if err != nil {
		return 0, err
	}
	return state.ManagedInstances(raw)
}

// deleteWith deletes the object kind/name with a propagation policy.
func (f *flow) deleteWith(ctx context.Context, objs []*unstructured.Unstructured, kind, name string, policy metav1.DeletionPropagation) {
	f.t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			if err := f.env.Client.Delete(ctx, o.DeepCopy(), client.PropagationPolicy(policy)); err != nil {
				f.t.Fatalf("deleting %s/%s with %s propagation: %v", kind, name, policy, err)
			}
			f.t.Logf("deleted %s/%s with %s propagation", kind, name, policy)
			return
		}
	}
	f.t.Fatalf("no %s/%s among the flow's objects", kind, name)
}

// waitDestroyed waits until each object of resources (kind/name) is gone,
// and checks that a successful destroy Job of runtime rt destroyed
// exactly the resources its state held.
func (f *flow) waitDestroyed(ctx context.Context, resources map[string]int, rt string) {
	f.t.Helper()
	f.waitFor(ctx, "every infrastructure object is destroyed and gone", jobWait, func(ctx context.Context) (bool, string, error) {
		for key := range resources {
			kind, name, _ := strings.Cut(key, "/")
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(infrav1.GroupVersion.WithKind(kind))
			if found, err := f.get(ctx, name, u); found || err != nil {
				return false, key + " is still there: " + conditionsOf(u), err
			}
		}
		return true, "", nil
	})
	version := f.runtimeVersion(rt)
	for key, n := range resources {
		kind, name, _ := strings.Cut(key, "/")
		destroys := f.runs(kind, name, string(infrav1.OperationDestroy))
		if !slices.ContainsFunc(destroys, func(r localnode.Run) bool {
			return r.ExitCode == 0 && r.Result.Runtime.Version == version && r.Result.Changes != nil && r.Result.Changes.Destroy == n
		}) {
			f.t.Errorf("%s is gone without a successful %s destroy of its %d resources (destroy runs: %s)", key, rt, n, describeRuns(destroys))
		}
		if ev := f.events(ctx, name, "DestroyInputsMismatch"); len(ev) > 0 {
			f.t.Errorf("%s: the destroy rendered other inputs than the state's: %s", key, ev[0].Note)
		}
	}
}

// deleteRest deletes what the flow created besides the Cluster API and
// CAPTF objects and checks nothing of CAPTF is left.
func (f *flow) deleteRest(ctx context.Context, objs []*unstructured.Unstructured) {
	f.t.Helper()
	var rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Secret" || o.GetKind() == "TerraformClusterIdentity" {
			rest = append(rest, o)
		}
	}
	f.waitFor(ctx, "the credentials, the identity and the bootstrap data are deleted", controllerWait, func(ctx context.Context) (bool, string, error) {
		err := devenv.Delete(ctx, f.env.Client, rest)
		return err == nil, fmt.Sprintf("%v", err), nil
	})
	f.waitFor(ctx, "nothing is left", controllerWait, f.nothingLeft)
}

func conditionsOf(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] != "True" || m["type"] == "Deleting" {
			out = append(out, fmt.Sprintf("%v=%v %v: %v", m["type"], m["status"], m["reason"], m["message"]))
		}
	}
	return strings.Join(out, "; ")
}

func describeRuns(runs []localnode.Run) string {
	var out []string
	for _, r := range runs {
		changes := "no changes"
		if r.Result.Changes != nil {
			changes = fmt.Sprintf("%d destroyed", r.Result.Changes.Destroy)
		}
		out = append(out, fmt.Sprintf("%s exit %d on %s %s, %s", r.Pod, r.ExitCode, r.Image, r.Result.Runtime.Version, changes))
	}
	return strings.Join(out, ", ")
}

// deleteMachineDeployment deletes a MachineDeployment with foreground
// propagation: the garbage collector takes its MachineSet and Machines, and
// with them the TerraformMachine Cluster API cloned from the template and
// its state Secrets; the machine is destroyed with its kept state.
func deleteMachineDeployment(rt string) func(t *testing.T, ctx context.Context, f *flow) {
	return func(t *testing.T, ctx context.Context, f *flow) {
		objs := pick(f.quickstart(rt), f.base()...)
		md, err := devenv.ReadManifestDir(filepath.Join(f.env.Repo, "test", "e2e", "testdata", "machinedeployment"))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range md {
			o.SetNamespace(f.ns)
			if o.GetKind() == "TerraformMachineTemplate" {
				f.set(o, devenv.ExampleImage("noop-machine", rt), "spec", "template", "spec", "source", "image")
			}
		}
		all := append(objs, md...)
		f.provision(ctx, all)
		var machine string
		f.waitFor(ctx, "Cluster API cloned a TerraformMachine from the template", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
			var list infrav1.TerraformMachineList
			if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
				return false, "", err
			}
			if len(list.Items) != 1 {
				md := &unstructured.Unstructured{}
				md.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachineDeployment"))
				_, _ = f.get(ctx, "md", md)
				return false, fmt.Sprintf("%d TerraformMachines; MachineDeployment: %s", len(list.Items), conditionsOf(md)), nil
			}
			machine = list.Items[0].Name
			return true, "", nil
		})
		clone := &unstructured.Unstructured{}
		clone.SetGroupVersionKind(infrav1.GroupVersion.WithKind("TerraformMachine"))
		clone.SetNamespace(f.ns)
		clone.SetName(machine)
		resources := f.waitProvisioned(ctx, []*unstructured.Unstructured{clone})
		f.wantTemplateCapacity(ctx, "md", devenv.ExampleImage("noop-machine", rt))
		f.deleteWith(ctx, all, "MachineDeployment", "md", metav1.DeletePropagationForeground)
		f.waitDestroyed(ctx, resources, rt)
		f.teardown(ctx, all, rt)
	}
}

// wantTemplateCapacity waits until the TerraformMachineTemplate name shows
// what the cluster autoscaler reads to scale from zero: the capacity and
// node info the example machine image declares in its labels.
func (f *flow) wantTemplateCapacity(ctx context.Context, name, image string) {
	f.t.Helper()
	tmt := &infrav1.TerraformMachineTemplate{}
	f.waitFor(ctx, "the template shows the image's capacity", controllerWait, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, name, tmt); err != nil {
			return false, "", err
		}
		st := tmt.Status
		ok := st.Capacity.Cpu().String() == "2" && st.Capacity.Memory().String() == "4Gi" && st.NodeInfo != nil && st.NodeInfo.Architecture == "amd64" &&
			st.CapacitySource != nil && st.CapacitySource.Source == "Image" && st.CapacitySource.Image == image
		return ok, fmt.Sprintf("status %+v", st), nil
	})
}
