package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/localnode"
)

// topologyWait bounds each wait of the ClusterClass and template flows:
// Cluster API's managers take their turn between CAPTF's steps, and with
// the whole suite on two cores a step can take minutes.
const topologyWait = 5 * time.Minute

// clusterClass is a Cluster of the release's `noop` ClusterClass
// (templates/clusterclass-noop.yaml) with a topology, both rendered by the
// real `clusterctl generate cluster --flavor clusterclass` from the release
// (templates/cluster-template-clusterclass.yaml), on the real Cluster API
// manager with kubeadm's real bootstrap provider for the workers and the
// pool. What the flow changes in what clusterctl rendered: the suite's
// control-plane stand-in (controlplane_test.go) replaces the kubeadm
// control plane and its machine template (clusterclassKubeadm runs those
// as shipped), a pool and its image are added, and the workers' rollout
// strategy suits machines whose Nodes never join. It provisions the
// cluster, two workers on Terraform and a pool on OpenTofu with kubeadm
// join data; topology variables change: Cluster API rolls the workers out
// to a new template on OpenTofu and patches the pool in place, which is
// applied on Terraform; a version bump rolls the workers again with the
// new version in their inputs and applies the cluster again; deleting the
// Cluster destroys everything.
func clusterClass(t *testing.T, ctx context.Context, f *flow) {
	if err := installStandIn(ctx, f.env); err != nil {
		t.Fatal(err)
	}
	standIn, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	wg.Go(func() { runStandIn(standIn, f.env, f.ns, func(err error) { t.Error(err) }) })

	// `clusterctl generate cluster --flavor clusterclass` adds the class
	// of the release (clusterclass-noop.yaml) the namespace does not have.
	generated := f.generateCluster(ctx, "cc", "clusterclass", map[string]string{
		"TERRAFORM_IDENTITY_NAME": f.identity(),
		"TERRAFORM_CLUSTER_IMAGE": devenv.ExampleImage("noop-cluster", "tofu"),
		"TERRAFORM_MACHINE_IMAGE": devenv.ExampleImage("noop-machine", "terraform"),
	}, "--kubernetes-version", "v1.34.1", "--control-plane-machine-count", "1", "--worker-machine-count", "2")
	if !slices.ContainsFunc(generated, func(o *unstructured.Unstructured) bool { return o.GetKind() == "ClusterClass" && o.GetName() == "noop" }) {
		t.Fatalf("clusterctl generate cluster --flavor clusterclass did not add the noop ClusterClass: %d objects", len(generated))
	}
	objs := slices.Concat(pick(f.quickstart(""), "Namespace/"+f.ns, "Namespace/captf-system", "Secret/"+f.sourceSecret(), "TerraformClusterIdentity/"+f.identity()),
		f.withStandIn(generated))
	f.withPool(objs)
	start := time.Now()
	f.create(ctx, objs)

	tc := f.waitTopology(ctx, "TerraformCluster", 1)[0]
	f.waitFor(ctx, "the TerraformCluster Cluster API made from the class is provisioned", topologyWait, func(ctx context.Context) (bool, string, error) {
		var c infrav1.TerraformCluster
		if _, err := f.get(ctx, tc, &c); err != nil {
			return false, "", err
		}
		return provisionedReady(c.Status.WorkspaceStatus), ready(c.Status.Conditions), nil
	})
	workers := f.waitMachines(ctx, 2, f.workerTemplate(ctx))
	f.wantBootstrap(ctx, workers, "v1.34.1")
	pool := f.waitTopology(ctx, "TerraformMachinePool", 1)[0]
	f.waitFor(ctx, "the TerraformMachinePool Cluster API made from the class is provisioned with 2 members", topologyWait, func(ctx context.Context) (bool, string, error) {
		var p infrav1.TerraformMachinePool
		if _, err := f.get(ctx, pool, &p); err != nil {
			return false, "", err
		}
		return provisionedReady(p.Status.WorkspaceStatus) && len(p.Spec.ProviderIDList) == 2, ready(p.Status.Conditions), nil
	})
	f.wantBootstrap(ctx, map[string]int{"TerraformMachinePool/" + pool: 0}, "")
	t.Logf("the topology is provisioned after %s", time.Since(start).Round(time.Second))

	// A topology variable: Cluster API patches it into a new template (its
	// dry run passes the immutability webhook) and rolls the workers out.
	old := f.workerTemplate(ctx)
	f.patchCluster(ctx, `{"spec":{"topology":{"variables":[`+
		fmt.Sprintf(`{"name":"identityName","value":%q},{"name":"clusterImage","value":%q},{"name":"machineImage","value":%q},{"name":"machinePoolImage","value":%q}`,
			f.identity(), devenv.ExampleImage("noop-cluster", "tofu"), devenv.ExampleImage("noop-machine", "tofu"), devenv.ExampleImage("noop-machinepool", "terraform"))+`]}}}`)
	var rolledTemplate string
	f.waitFor(ctx, "the MachineDeployment names a new template", topologyWait, func(ctx context.Context) (bool, string, error) {
		var err error
		rolledTemplate, _, err = f.mdTemplate(ctx)
		return rolledTemplate != "" && rolledTemplate != old, "still " + old, err
	})
	var tmpl infrav1.TerraformMachineTemplate
	if _, err := f.get(ctx, rolledTemplate, &tmpl); err != nil || tmpl.Spec.Template.Spec.Source.Image != devenv.ExampleImage("noop-machine", "tofu") {
		t.Fatalf("the new template %s runs %q (%v), want the machineImage variable's image", rolledTemplate, tmpl.Spec.Template.Spec.Source.Image, err)
	}
	rolled := f.waitMachines(ctx, 2, rolledTemplate)
	f.waitDestroyed(ctx, workers, "terraform")
	f.wantApplied(rolled, "tofu")
	f.wantBootstrap(ctx, rolled, "v1.34.1")
	// The pool is patched in place: the same object, applied on Terraform.
	f.waitFor(ctx, "the pool runs the new machinePoolImage, applied on Terraform", topologyWait, func(ctx context.Context) (bool, string, error) {
		var p infrav1.TerraformMachinePool
		if _, err := f.get(ctx, pool, &p); err != nil {
			return false, "", err
		}
		return p.Spec.Source.Image == devenv.ExampleImage("noop-machinepool", "terraform") && provisionedReady(p.Status.WorkspaceStatus) &&
			p.Status.Source != nil && p.Status.Source.RuntimeVersion == f.runtimeVersion("terraform"), fmt.Sprintf("image %s, %s", p.Spec.Source.Image, ready(p.Status.Conditions)), nil
	})
	clusterApplies := len(f.runs("TerraformCluster", tc, string(infrav1.OperationApply)))
	t.Logf("rolled out to the OpenTofu template after %s", time.Since(start).Round(time.Second))

	// A version bump: the stand-in takes it at once, then Cluster API
	// rolls the workers out with the new version.
	f.patchCluster(ctx, `{"spec":{"topology":{"version":"v1.34.2"}}}`)
	f.waitDestroyed(ctx, rolled, "tofu")
	upgraded := f.waitMachines(ctx, 2, rolledTemplate)
	f.wantBootstrap(ctx, upgraded, "v1.34.2")
	// The cluster's inputs changed too (kubernetes_version, and
	// control_plane_initialized since the stand-in initialized): the noop
	// module replaces its load balancer for that, so the TerraformCluster's
	// guard holds the plan until a user approves it, as one does here.
	f.waitFor(ctx, "the TerraformCluster's new inputs wait for approval", topologyWait, func(ctx context.Context) (bool, string, error) {
		var c infrav1.TerraformCluster
		if _, err := f.get(ctx, tc, &c); err != nil {
			return false, "", err
		}
		cond := conditionOf(c.Status.Conditions, "InputsApplied")
		return cond != nil && cond.Reason == "AwaitingApproval", ready(c.Status.Conditions), nil
	})
	f.approve(ctx, "tfc/"+tc)
	f.waitFor(ctx, "the approved plan is applied: the cluster's inputs, new version included, are applied", topologyWait, func(ctx context.Context) (bool, string, error) {
		var c infrav1.TerraformCluster
		if _, err := f.get(ctx, tc, &c); err != nil {
			return false, "", err
		}
		applies := f.runs("TerraformCluster", tc, string(infrav1.OperationApply))
		cond := conditionOf(c.Status.Conditions, "InputsApplied")
		return cond != nil && cond.Status == metav1.ConditionTrue && len(applies) > clusterApplies && applies[len(applies)-1].ExitCode == 0,
			fmt.Sprintf("%d applies; %s", len(applies), conditionsOf(mustUnstructured(f.t, &c))), nil
	})
	t.Logf("upgraded to v1.34.2 after %s", time.Since(start).Round(time.Second))

	live := append(slices.Collect(maps.Keys(upgraded)), "TerraformCluster/"+tc, "TerraformMachinePool/"+pool)
	f.teardownTopology(ctx, objs, live)
	t.Logf("deleted after %s", time.Since(start).Round(time.Second))
}

// withStandIn swaps the control plane of the noop ClusterClass among objs
// for the suite's stand-in: a StandInControlPlaneTemplate replaces the
// KubeadmControlPlaneTemplate, and the stand-in has no machines, so the
// class names no control plane machine template and no patch selects one.
func (f *flow) withStandIn(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	f.t.Helper()
	var out []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetKind() == "ClusterClass":
			f.set(o, map[string]any{"apiVersion": standInGVK.GroupVersion().String(), "kind": standInGVK.Kind + "Template", "name": "noop-control-plane"},
				"spec", "controlPlane", "templateRef")
			unstructured.RemoveNestedField(o.Object, "spec", "controlPlane", "machineInfrastructure")
			patches, _, _ := unstructured.NestedSlice(o.Object, "spec", "patches")
			for _, p := range patches {
				for _, d := range p.(map[string]any)["definitions"].([]any) {
					unstructured.RemoveNestedField(d.(map[string]any), "selector", "matchResources", "controlPlane")
				}
			}
			f.set(o, patches, "spec", "patches")
		case o.GetKind() == "KubeadmControlPlaneTemplate":
			o.SetAPIVersion(standInGVK.GroupVersion().String())
			o.SetKind(standInGVK.Kind + "Template")
			f.set(o, map[string]any{"spec": map[string]any{}}, "spec", "template")
		case o.GetKind() == "TerraformMachineTemplate" && o.GetName() == "noop-control-plane":
			continue
		}
		out = append(out, o)
	}
	return out
}

// withPool adds a machine pool of the class to the Cluster among objs,
// and a rollout strategy for a cluster whose Nodes never join: no machine
// ever becomes available, so the rollout may take all of them away before
// it adds the new ones.
func (f *flow) withPool(objs []*unstructured.Unstructured) {
	f.t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Cluster" {
			continue
		}
		mds, _, _ := unstructured.NestedSlice(o.Object, "spec", "topology", "workers", "machineDeployments")
		mds[0].(map[string]any)["rollout"] = map[string]any{"strategy": map[string]any{"type": "RollingUpdate",
			"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": "100%"}}}
		f.set(o, mds, "spec", "topology", "workers", "machineDeployments")
		f.set(o, []any{map[string]any{"class": "default-pool", "name": "mp-0", "replicas": int64(2)}}, "spec", "topology", "workers", "machinePools")
		vars, _, _ := unstructured.NestedSlice(o.Object, "spec", "topology", "variables")
		vars = append(vars, map[string]any{"name": "machinePoolImage", "value": devenv.ExampleImage("noop-machinepool", "tofu")})
		f.set(o, vars, "spec", "topology", "variables")
	}
}

// waitTopology waits until the namespace holds n objects of the CAPTF kind
// and returns their names.
func (f *flow) waitTopology(ctx context.Context, kind string, n int) []string {
	f.t.Helper()
	var names []string
	f.waitFor(ctx, fmt.Sprintf("Cluster API created %d %s from the class", n, kind), topologyWait, func(ctx context.Context) (bool, string, error) {
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(infrav1.GroupVersion.WithKind(kind + "List"))
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			return false, "", err
		}
		names = names[:0]
		for _, o := range list.Items {
			names = append(names, o.GetName())
		}
		return len(names) == n, fmt.Sprintf("%d so far", len(names)), nil
	})
	return names
}

// workerTemplate waits until the topology's MachineDeployment md-0
// exists (Cluster API creates it once the control plane is stable) and
// returns the TerraformMachineTemplate it clones its machines from.
func (f *flow) workerTemplate(ctx context.Context) string {
	f.t.Helper()
	var name string
	f.waitFor(ctx, "the topology's MachineDeployment md-0 exists", topologyWait, func(ctx context.Context) (bool, string, error) {
		var why string
		var err error
		name, why, err = f.mdTemplate(ctx)
		return name != "", why, err
	})
	return name
}

// mdTemplate is the template of the topology's MachineDeployment md-0;
// "" and why while there is no such MachineDeployment.
func (f *flow) mdTemplate(ctx context.Context) (string, string, error) {
	var list clusterv1.MachineDeploymentList
	if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns), client.MatchingLabels{clusterv1.ClusterTopologyMachineDeploymentNameLabel: "md-0"}); err != nil {
		return "", "", err
	}
	if len(list.Items) != 1 {
		return "", fmt.Sprintf("%d MachineDeployments", len(list.Items)), nil
	}
	return list.Items[0].Spec.Template.Spec.InfrastructureRef.Name, "", nil
}

// patchCluster merge-patches the Cluster cc.
func (f *flow) patchCluster(ctx context.Context, patch string) {
	f.t.Helper()
	c := &clusterv1.Cluster{}
	c.SetNamespace(f.ns)
	c.SetName("cc")
	if err := f.env.Client.Patch(ctx, c, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		f.t.Fatalf("patching the Cluster with %s: %v", patch, err)
	}
}

// wantApplied checks each object (kind/name) was applied by runtime rt.
func (f *flow) wantApplied(objs map[string]int, rt string) {
	f.t.Helper()
	version := f.runtimeVersion(rt)
	for key := range objs {
		kind, name, _ := strings.Cut(key, "/")
		if !slices.ContainsFunc(f.runs(kind, name, string(infrav1.OperationApply)), func(r localnode.Run) bool {
			return r.ExitCode == 0 && r.Result.Runtime.Version == version
		}) {
			f.t.Errorf("%s was not provisioned by %s %s", key, rt, version)
		}
	}
}

// wantBootstrap checks that the module of each object (kind/name) received
// its owner's join data as kubeadm's bootstrap provider wrote it (the noop
// modules keep its digest in their state) and, for a machine, the
// Kubernetes version (none for a pool: "").
func (f *flow) wantBootstrap(ctx context.Context, objs map[string]int, version string) {
	f.t.Helper()
	f.wantBootstrapCommand(ctx, objs, "kubeadm join", version)
}

// wantBootstrapCommand is wantBootstrap for bootstrap data that runs
// command.
func (f *flow) wantBootstrapCommand(ctx context.Context, objs map[string]int, command, version string) {
	f.t.Helper()
	for key := range objs {
		kind, name, _ := strings.Cut(key, "/")
		secret, err := f.bootstrapSecret(ctx, kind, name)
		if err != nil {
			f.t.Errorf("%s: %v", key, err)
			continue
		}
		if !strings.Contains(string(secret.Data["value"]), command) {
			f.t.Errorf("%s: its bootstrap data Secret %s does not run %s", key, secret.Name, command)
		}
		// The contract passes bootstrap_data base64-encoded.
		sum := sha256.Sum256([]byte(base64.StdEncoding.EncodeToString(secret.Data["value"])))
		triggers, err := f.dataTriggers(ctx, kind, name)
		if err != nil {
			f.t.Errorf("%s: %v", key, err)
			continue
		}
		if triggers["bootstrap"] != hex.EncodeToString(sum[:]) {
			f.t.Errorf("%s: the module received other bootstrap data than %s's", key, secret.Name)
		}
		if version != "" && triggers["version"] != version {
			f.t.Errorf("%s: the module received Kubernetes version %q, want %s", key, triggers["version"], version)
		}
	}
}

// bootstrapSecret is the bootstrap data Secret of the Machine or
// MachinePool that owns the CAPTF object.
func (f *flow) bootstrapSecret(ctx context.Context, kind, name string) (*corev1.Secret, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(infrav1.GroupVersion.WithKind(kind))
	if _, err := f.get(ctx, name, obj); err != nil {
		return nil, err
	}
	var secretName string
	for _, ref := range obj.GetOwnerReferences() {
		switch ref.Kind {
		case "Machine":
			var m clusterv1.Machine
			if _, err := f.get(ctx, ref.Name, &m); err != nil {
				return nil, err
			}
			secretName = ptr.Deref(m.Spec.Bootstrap.DataSecretName, "")
		case "MachinePool":
			var mp clusterv1.MachinePool
			if _, err := f.get(ctx, ref.Name, &mp); err != nil {
				return nil, err
			}
			secretName = ptr.Deref(mp.Spec.Template.Spec.Bootstrap.DataSecretName, "")
		}
	}
	if secretName == "" {
		return nil, fmt.Errorf("no owner with bootstrap data")
	}
	var s corev1.Secret
	if _, err := f.get(ctx, secretName, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// dataTriggers are the replacement triggers of the first terraform_data of
// the object's state but the machine's identity (noop-machine's "id"): the
// noop modules record their inputs there.
func (f *flow) dataTriggers(ctx context.Context, kind, name string) (map[string]string, error) {
	_, raw, err := f.readState(ctx, kind, name)
	if err != nil {
		return nil, err
	}
	var st struct {
		Resources []struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Instances []struct {
				Attributes struct {
					Triggers struct {
						Value map[string]string `json:"value"`
					} `json:"triggers_replace"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, err
	}
	for _, r := range st.Resources {
		if r.Type == "terraform_data" && r.Name != "id" && len(r.Instances) > 0 {
			return r.Instances[0].Attributes.Triggers.Value, nil
		}
	}
	return nil, fmt.Errorf("its state holds no terraform_data")
}

// teardownTopology deletes the Cluster, waits until every CAPTF object
// (live, kind/name) is gone after a successful destroy Job, deletes the
// class and the rest, and checks nothing is left.
func (f *flow) teardownTopology(ctx context.Context, objs []*unstructured.Unstructured, live []string) {
	f.t.Helper()
	resources := map[string]int{}
	for _, key := range live {
		kind, name, _ := strings.Cut(key, "/")
		n, err := f.instances(ctx, kind, name)
		if err != nil {
			f.t.Fatal(err)
		}
		resources[key] = n
	}
	f.teardown(ctx, objs, "")
	for key, n := range resources {
		kind, name, _ := strings.Cut(key, "/")
		if !slices.ContainsFunc(f.runs(kind, name, string(infrav1.OperationDestroy)), func(r localnode.Run) bool {
			return r.ExitCode == 0 && r.Result.Changes != nil && r.Result.Changes.Destroy == n
		}) {
			f.t.Errorf("%s is gone without a successful destroy of its %d resources", key, n)
		}
	}
}

// clusterclassKubeadm runs the release's `noop` ClusterClass exactly as
// `clusterctl generate cluster --flavor clusterclass` renders it, kubeadm
// control plane included: Cluster API patches machineImage into the
// control plane's machine template, and the kubeadm control plane
// provisions its first machine of three with kubeadm's init data; with no
// workload cluster to come up on, it goes no further (see defaultFlavor).
// Deleting the Cluster destroys both.
func clusterclassKubeadm(t *testing.T, ctx context.Context, f *flow) {
	image := devenv.ExampleImage("noop-machine", "terraform")
	generated := f.generateCluster(ctx, "ck", "clusterclass", map[string]string{
		"TERRAFORM_IDENTITY_NAME": f.identity(),
		"TERRAFORM_CLUSTER_IMAGE": devenv.ExampleImage("noop-cluster", "tofu"),
		"TERRAFORM_MACHINE_IMAGE": image,
	}, "--kubernetes-version", "v1.34.1", "--control-plane-machine-count", "3", "--worker-machine-count", "0")
	objs := slices.Concat(pick(f.quickstart(""), "Namespace/"+f.ns, "Namespace/captf-system", "Secret/"+f.sourceSecret(), "TerraformClusterIdentity/"+f.identity()),
		generated)
	start := time.Now()
	f.create(ctx, objs)

	tc := f.waitTopology(ctx, "TerraformCluster", 1)[0]
	var template string
	f.waitFor(ctx, "Cluster API made the kubeadm control plane from the class", topologyWait, func(ctx context.Context) (bool, string, error) {
		var list unstructured.UnstructuredList
		list.SetAPIVersion("controlplane.cluster.x-k8s.io/v1beta2")
		list.SetKind("KubeadmControlPlaneList")
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil || len(list.Items) != 1 {
			return false, fmt.Sprintf("%d KubeadmControlPlanes", len(list.Items)), err
		}
		template, _, _ = unstructured.NestedString(list.Items[0].Object, "spec", "machineTemplate", "spec", "infrastructureRef", "name")
		return template != "", "no machine template yet", nil
	})
	var tmpl infrav1.TerraformMachineTemplate
	if _, err := f.get(ctx, template, &tmpl); err != nil || tmpl.Spec.Template.Spec.Source.Image != image {
		t.Fatalf("the control plane's machine template %s runs %q (%v), want the machineImage variable's %s", template, tmpl.Spec.Template.Spec.Source.Image, err, image)
	}
	stop := f.nudgeKubeadm(ctx)
	controlPlane := f.waitClones(ctx, 1, template, true)
	stop()
	f.wantBootstrapCommand(ctx, controlPlane, "kubeadm init", "v1.34.1")
	f.wantApplied(controlPlane, "terraform")
	t.Logf("the first control plane machine is provisioned after %s", time.Since(start).Round(time.Second))

	f.teardownTopology(ctx, objs, append(slices.Collect(maps.Keys(controlPlane)), "TerraformCluster/"+tc))
	t.Logf("deleted after %s", time.Since(start).Round(time.Second))
}

func mustUnstructured(t *testing.T, obj any) *unstructured.Unstructured {
	t.Helper()
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: raw}
}
