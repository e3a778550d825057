//go:build e2eclusterctl

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/test/envtest"
)

// clusterctl move for real, between two local environments running side
// by side (`captf-dev up --without-manager` in directories of their own,
// each with its manager), as docs/runbooks/move.md says: a cluster with two
// machines, a MachineDeployment and a pool is provisioned on the source,
// then moved while the pool's scale-up Job runs (block-move holds the move
// until the Job's result is bookkept). On the target nothing is applied
// again, a scale-up provisions, and deleting the Cluster destroys
// everything with the moved state; on the source nothing is destroyed and
// nothing is left, and the identity is still there.
func TestClusterctlMove(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	tools := envtest.RequireTools(t, "clusterctl")
	began := time.Now()
	src := startWithoutManager(t, ctx, "captf-move-src-")
	dst := startWithoutManager(t, ctx, "captf-move-dst-")
	// The source's orphan sweep runs every minute rather than every ten,
	// so that the leftovers the runbook leaves to it go while the test
	// waits.
	src.startManager(t, "source-manager", "--sync-period=1m")
	dst.startManager(t, "target-manager")
	t.Logf("two environments and their managers started in %s", time.Since(began).Round(time.Second))
	f, srcCS := src.flow(t, "move")
	g, dstCS := dst.flow(t, "move")
	watching, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	srcJobs, dstJobs := watchJobs(watching, srcCS, f.ns), watchJobs(watching, dstCS, g.ns)
	for _, fl := range []*flow{f, g} {
		labelLikeClusterctlInit(ctx, fl)
	}

	objs := slices.Concat(f.quickstart(""), f.moveMachineDeployment())
	for _, o := range objs {
		// The quickstart's bootstrap data Secrets are made by hand, with
		// no owner and a name clusterctl does not link to the Cluster:
		// as the runbook says, they move only with the move label (on
		// the target the pool renders its inputs from its Secret).
		if o.GetKind() == "Secret" && o.GetNamespace() == f.ns {
			o.SetLabels(map[string]string{"clusterctl.cluster.x-k8s.io/move": ""})
		}
		// The pool's applies that scale take 20 s: the move starts while
		// the scale-up Job runs, whatever the machine's speed.
		if o.GetKind() == "TerraformMachinePool" {
			f.set(o, map[string]any{"scale_delay": "20s"}, "spec", "variables")
		}
	}
	f.create(ctx, objs)
	f.workloadKubeconfig(ctx, src.kubeconfig)
	named := []string{"TerraformCluster/quickstart", "TerraformMachine/quickstart-cp-0", "TerraformMachine/quickstart-worker-0"}
	f.waitFor(ctx, "the cluster, its 3 machines and its pool of 2 are provisioned", jobWait, f.allProvisioned(named, 3, 2))
	f.standInNodes(ctx)

	// The move starts while a Job runs: the pool scales from 2 to 3.
	f.scalePool(ctx, 3)
	before := len(poolApplies(srcJobs.snapshot()))
	f.waitFor(ctx, "the pool's scale-up Job is created", controllerWait, func(context.Context) (bool, string, error) {
		for _, j := range srcJobs.snapshot() {
			if j.object() == "TerraformMachinePool/quickstart-pool" && j.op == string(infrav1.OperationApply) && !j.ended() && len(poolApplies(srcJobs.snapshot())) == before {
				return true, "", nil
			}
		}
		return false, "no unfinished apply Job of the pool", nil
	})
	moving := time.Now()
	out, err := runClusterctl(ctx, t, tools, "move", "--kubeconfig", src.kubeconfig, "--to-kubeconfig", dst.kubeconfig, "--namespace", f.ns, "-v", "5")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clusterctl move took %s", time.Since(moving).Round(100*time.Millisecond))
	if !strings.Contains(out, "Move blocked by") {
		t.Errorf("clusterctl move did not wait for block-move while the pool's scale-up Job ran:\n%s", out)
	}
	if got := poolApplies(srcJobs.snapshot()); len(got) != before+1 {
		t.Errorf("the pool's scale-up Job did not succeed on the source before the move (successful applies %v)", got)
	}

	// The identity's source Secret is not moved: the runbook copies it.
	g.copyIdentitySecret(ctx, f)

	// The target holds everything, provisioned from the moved state.
	g.waitFor(ctx, "the moved objects are provisioned on the target, the pool with 3", controllerWait, g.allProvisioned(named, 3, 3))
	g.waitFor(ctx, "the target's manager has taken every moved object in hand", controllerWait, g.inputsApplied)

	// On the source, nothing was destroyed and nothing is left.
	f.waitFor(ctx, "nothing is left on the source", controllerWait, func(ctx context.Context) (bool, string, error) {
		if ok, why, err := f.nothingLeft(ctx); !ok || err != nil {
			return ok, why, err
		}
		return f.noTerraformObjects(ctx)
	})
	for _, j := range srcJobs.snapshot() {
		if j.op == string(infrav1.OperationDestroy) {
			t.Errorf("the source ran a destroy: Job %s of %s", j.name, j.object())
		}
		if j.created.After(moving.Add(time.Second)) {
			t.Errorf("the source created Job %s of %s after the move", j.name, j.object())
		}
	}
	var id infrav1.TerraformClusterIdentity
	if err := f.env.Client.Get(ctx, client.ObjectKey{Name: f.identity()}, &id); err != nil {
		t.Errorf("the identity is gone from the source: %v", err)
	}

	// On the target, a scale-up provisions, and deleting the Cluster
	// destroys everything with the moved state.
	g.patchMD(ctx, `{"spec":{"replicas":2}}`)
	g.waitFor(ctx, "the MachineDeployment's new machine is provisioned on the target", jobWait, g.allProvisioned(named, 4, 3))
	g.deleteQuickstart(ctx)
	stopWatching()
	<-srcJobs.done
	<-dstJobs.done
	for _, j := range dstJobs.snapshot() {
		if j.op == string(infrav1.OperationApply) && j.ownerKind != "TerraformMachine" {
			t.Errorf("the target applied %s again (Job %s): its inputs had not changed", j.object(), j.name)
		}
	}
	destroyed := destroyedObjects(t, dstJobs.snapshot(), append(named, "TerraformMachinePool/quickstart-pool"))
	if n := len(destroyed); n != 6 {
		t.Errorf("the target destroyed %d objects, want 6 (the cluster, 4 machines, the pool): %v", n, destroyed)
	}
	applied := 0
	for _, j := range dstJobs.snapshot() {
		if j.op == string(infrav1.OperationApply) {
			applied++
		}
	}
	if applied != 1 {
		t.Errorf("the target ran %d apply Jobs, want 1 (the scale-up's machine)", applied)
	}
}

// deleteQuickstart deletes the quickstart Cluster and waits until every
// CAPTF object is gone and nothing is left in the namespace.
func (f *flow) deleteQuickstart(ctx context.Context) {
	f.t.Helper()
	var cluster clusterv1.Cluster
	if _, err := f.get(ctx, "quickstart", &cluster); err != nil {
		f.t.Fatal(err)
	}
	if err := f.env.Client.Delete(ctx, &cluster); err != nil {
		f.t.Fatal(err)
	}
	f.waitFor(ctx, "deleting the Cluster destroys every object and leaves nothing", jobWait, func(ctx context.Context) (bool, string, error) {
		if ok, why, err := f.noTerraformObjects(ctx); !ok || err != nil {
			return ok, why, err
		}
		return f.nothingLeft(ctx)
	})
}

// destroyedObjects are the objects (kind/name) a successful destroy Job
// of jobs ran for; each of want missing is an error.
func destroyedObjects(t *testing.T, jobs []seenJob, want []string) map[string]bool {
	t.Helper()
	destroyed := map[string]bool{}
	for _, j := range jobs {
		if j.op == string(infrav1.OperationDestroy) && j.succeeded {
			destroyed[j.object()] = true
		}
	}
	for _, o := range want {
		if !destroyed[o] {
			t.Errorf("no successful destroy of %s (destroys: %v)", o, destroyed)
		}
	}
	return destroyed
}

// copyIdentitySecret copies the identity's source Secret from the flow
// from to g's environment, as the move runbook does: without its
// server-set fields.
func (g *flow) copyIdentitySecret(ctx context.Context, from *flow) {
	g.t.Helper()
	var src corev1.Secret
	if err := from.env.Client.Get(ctx, client.ObjectKey{Namespace: "captf-system", Name: from.sourceSecret()}, &src); err != nil {
		g.t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "captf-system"}}
	if err := g.env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		g.t.Fatal(err)
	}
	copied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name, Labels: src.Labels}, Type: src.Type, Data: src.Data}
	if err := g.env.Client.Create(ctx, copied); err != nil {
		g.t.Fatal(err)
	}
}

// labelLikeClusterctlInit labels the Cluster API and CAPTF CRDs of the
// flow's environment as `clusterctl init` labels a provider's components:
// clusterctl move only considers CRDs labelled clusterctl.cluster.x-k8s.io.
func labelLikeClusterctlInit(ctx context.Context, f *flow) {
	f.t.Helper()
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinitionList"})
	if err := f.env.Client.List(ctx, crds); err != nil {
		f.t.Fatal(err)
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		if group, _, _ := unstructured.NestedString(crd.Object, "spec", "group"); !strings.HasSuffix(group, "cluster.x-k8s.io") {
			continue
		}
		patch := []byte(`{"metadata":{"labels":{"clusterctl.cluster.x-k8s.io":""}}}`)
		if err := f.env.Client.Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch)); err != nil {
			f.t.Fatal(err)
		}
	}
}

// moveMachineDeployment is a MachineDeployment of one machine from an
// OpenTofu template, in the flow's namespace.
func (f *flow) moveMachineDeployment() []*unstructured.Unstructured {
	f.t.Helper()
	md, err := devenv.ReadManifestDir(filepath.Join(f.env.Repo, "test", "e2e", "testdata", "machinedeployment"))
	if err != nil {
		f.t.Fatal(err)
	}
	for _, o := range md {
		o.SetNamespace(f.ns)
		switch o.GetKind() {
		case "TerraformMachineTemplate":
			o.SetName("md-tofu")
			f.set(o, devenv.ExampleImage("noop-machine", "tofu"), "spec", "template", "spec", "source", "image")
		case "MachineDeployment":
			f.set(o, int64(1), "spec", "replicas")
			f.set(o, "md-tofu", "spec", "template", "spec", "infrastructureRef", "name")
		}
	}
	return md
}

// allProvisioned: the named objects and machines TerraformMachines in all
// are provisioned, and the pool with pool instances.
func (f *flow) allProvisioned(named []string, machines int, pool int32) func(context.Context) (bool, string, error) {
	return func(ctx context.Context) (bool, string, error) {
		for _, o := range named {
			if ok, why, err := f.provisioned(ctx, o, pool); !ok || err != nil {
				return false, why, err
			}
		}
		// The pool's Ready follows its last apply, whose Job a move leaves
		// on the source: on the target the state vouches for it.
		var mp infrav1.TerraformMachinePool
		if _, err := f.get(ctx, "quickstart-pool", &mp); err != nil {
			return false, "", err
		}
		if !provisionedReady(mp.Status.WorkspaceStatus) || len(mp.Spec.ProviderIDList) != int(pool) || mp.Status.Replicas == nil || *mp.Status.Replicas != pool {
			return false, fmt.Sprintf("TerraformMachinePool/quickstart-pool: %s, providerIDList %v", conditionsOf(mustUnstructured(f.t, &mp)), mp.Spec.ProviderIDList), nil
		}
		var list infrav1.TerraformMachineList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			return false, "", err
		}
		if len(list.Items) != machines {
			return false, fmt.Sprintf("%d TerraformMachines, want %d", len(list.Items), machines), nil
		}
		for _, m := range list.Items {
			if !provisionedReady(m.Status.WorkspaceStatus) {
				return false, "TerraformMachine/" + m.Name + ": " + ready(m.Status.Conditions), nil
			}
		}
		return true, "", nil
	}
}

// inputsApplied: every CAPTF object of the namespace says its inputs are
// applied, on a pass of its current generation.
func (f *flow) inputsApplied(ctx context.Context) (bool, string, error) {
	statuses := f.workspaces(ctx)
	for _, s := range statuses {
		c := conditionIn(s.st.Conditions, infrav1.InputsAppliedCondition)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != s.gen {
			return false, s.name + ": " + ready(s.st.Conditions), nil
		}
	}
	return len(statuses) > 0, fmt.Sprintf("%d objects", len(statuses)), nil
}

// workspace is a CAPTF object's status, with its kind/name and generation.
type workspace struct {
	name string
	gen  int64
	st   infrav1.WorkspaceStatus
}

// workspaces are the flow's TerraformClusters, TerraformMachines and
// TerraformMachinePools.
func (f *flow) workspaces(ctx context.Context) []workspace {
	f.t.Helper()
	var out []workspace
	var cl infrav1.TerraformClusterList
	var ms infrav1.TerraformMachineList
	var ps infrav1.TerraformMachinePoolList
	for _, l := range []client.ObjectList{&cl, &ms, &ps} {
		if err := f.env.Client.List(ctx, l, client.InNamespace(f.ns)); err != nil {
			f.t.Fatal(err)
		}
	}
	for _, o := range cl.Items {
		out = append(out, workspace{"TerraformCluster/" + o.Name, o.Generation, o.Status.WorkspaceStatus})
	}
	for _, o := range ms.Items {
		out = append(out, workspace{"TerraformMachine/" + o.Name, o.Generation, o.Status.WorkspaceStatus})
	}
	for _, o := range ps.Items {
		out = append(out, workspace{"TerraformMachinePool/" + o.Name, o.Generation, o.Status.WorkspaceStatus})
	}
	return out
}

func conditionIn(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// noTerraformObjects: the namespace holds no CAPTF object.
func (f *flow) noTerraformObjects(ctx context.Context) (bool, string, error) {
	var left []string
	for kind, l := range map[string]client.ObjectList{
		"TerraformCluster": &infrav1.TerraformClusterList{}, "TerraformMachine": &infrav1.TerraformMachineList{},
		"TerraformMachinePool": &infrav1.TerraformMachinePoolList{},
	} {
		if err := f.env.Client.List(ctx, l, client.InNamespace(f.ns)); err != nil {
			return false, "", err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return false, "", err
		}
		for _, it := range items {
			left = append(left, kind+"/"+it.(metav1.Object).GetName())
		}
	}
	slices.Sort(left)
	return len(left) == 0, "left: " + strings.Join(left, ", "), nil
}

// workloadKubeconfig gives the quickstart Cluster a workload cluster, the
// test double of a real one: its kubeconfig Secret names the
// environment's own API server (kubeconfig), where standInNodes then makes
// a Node for each Machine. It is made with the Cluster, as a control
// plane provider makes it, so that Cluster API never backs off from a
// workload cluster it cannot reach.
func (f *flow) workloadKubeconfig(ctx context.Context, kubeconfig string) {
	f.t.Helper()
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		f.t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "quickstart-kubeconfig", Labels: map[string]string{clusterv1.ClusterNameLabel: "quickstart"}},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"value": data},
	}
	if err := f.env.Client.Create(ctx, secret); err != nil {
		f.t.Fatal(err)
	}
}

// standInNodes makes in the workload cluster (workloadKubeconfig) a Node
// for each Machine, with the Machine's providerID, as a joined kubelet's
// would be, and touches the Machines so that Cluster API looks at once:
// it then sets each Machine's nodeRef and the control plane initialized,
// which clusterctl move requires.
func (f *flow) standInNodes(ctx context.Context) {
	f.t.Helper()
	var machines clusterv1.MachineList
	f.waitFor(ctx, "every Machine has its providerID", controllerWait, func(ctx context.Context) (bool, string, error) {
		if err := f.env.Client.List(ctx, &machines, client.InNamespace(f.ns)); err != nil {
			return false, "", err
		}
		for _, m := range machines.Items {
			if m.Spec.ProviderID == "" {
				return false, "Machine/" + m.Name + " has no providerID yet", nil
			}
		}
		return len(machines.Items) > 0, "no Machine", nil
	})
	for _, m := range machines.Items {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.ns + "-" + m.Name}, Spec: corev1.NodeSpec{ProviderID: m.Spec.ProviderID}}
		if err := f.env.Client.Create(ctx, node); err != nil {
			f.t.Fatal(err)
		}
		touch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"captf.io/test-node":%q}}}`, node.Name))
		if err := f.env.Client.Patch(ctx, &m, client.RawPatch(types.MergePatchType, touch)); err != nil {
			f.t.Fatal(err)
		}
	}
	f.waitFor(ctx, "every Machine has its Node and the control plane is initialized", controllerWait, func(ctx context.Context) (bool, string, error) {
		var cluster clusterv1.Cluster
		if _, err := f.get(ctx, "quickstart", &cluster); err != nil {
			return false, "", err
		}
		if c := conditionIn(cluster.Status.Conditions, clusterv1.ClusterControlPlaneInitializedCondition); c == nil || c.Status != metav1.ConditionTrue {
			return false, "the control plane is not initialized", nil
		}
		var machines clusterv1.MachineList
		if err := f.env.Client.List(ctx, &machines, client.InNamespace(f.ns)); err != nil {
			return false, "", err
		}
		for _, m := range machines.Items {
			if !m.Status.NodeRef.IsDefined() {
				return false, "Machine/" + m.Name + " has no nodeRef", nil
			}
		}
		return true, "", nil
	})
}

// runClusterctl runs the real clusterctl of the tool cache tools with
// nothing of the user's (a HOME of its own, no version check).
func runClusterctl(ctx context.Context, t *testing.T, tools string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(tools, "bin", "clusterctl"), args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "CLUSTERCTL_DISABLE_VERSIONCHECK=true"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("clusterctl %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}
