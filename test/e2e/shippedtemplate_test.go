package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
)

// defaultFlavor is what a user gets from the real `clusterctl generate
// cluster` with the release's default flavor (templates/
// cluster-template.yaml) and `clusterctl generate yaml` of its
// identity.yaml, as shipped, on the real Cluster
// API core manager and kubeadm's real control plane and bootstrap
// providers. With no workload cluster to reach, the kubeadm control plane
// provisions its first machine of three (with kubeadm's init data) and never
// initializes, so the worker waits for its join data, as it would while a
// real control plane comes up. Deleting the Cluster destroys what was
// provisioned and leaves nothing.
func defaultFlavor(t *testing.T, ctx context.Context, f *flow) {
	identity, err := clusterctl(ctx, t, f.env, map[string]string{"TERRAFORM_IDENTITY_NAME": f.identity(), "NAMESPACE": f.ns},
		"generate", "yaml", "--from", filepath.Join(f.releaseDir(), "identity.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	identityObjs, err := decodeYAML(identity)
	if err != nil {
		t.Fatal(err)
	}
	cluster := f.generateCluster(ctx, "df", "", map[string]string{
		"TERRAFORM_IDENTITY_NAME": f.identity(),
		"TERRAFORM_CLUSTER_IMAGE": devenv.ExampleImage("noop-cluster", "tofu"),
		"TERRAFORM_MACHINE_IMAGE": devenv.ExampleImage("noop-machine", "tofu"),
	}, "--kubernetes-version", "v1.34.1", "--control-plane-machine-count", "3", "--worker-machine-count", "1")
	objs := slices.Concat(pick(f.quickstart(""), "Namespace/"+f.ns), identityObjs, cluster)
	start := time.Now()
	f.create(ctx, objs)

	f.waitFor(ctx, "the TerraformCluster is provisioned", topologyWait, func(ctx context.Context) (bool, string, error) {
		var c infrav1.TerraformCluster
		if _, err := f.get(ctx, "df", &c); err != nil {
			return false, "", err
		}
		return provisionedReady(c.Status.WorkspaceStatus), ready(c.Status.Conditions), nil
	})
	stop := f.nudgeKubeadm(ctx)
	controlPlane := f.waitClones(ctx, 1, "df-control-plane", true)
	stop()
	f.wantBootstrapCommand(ctx, controlPlane, "kubeadm init", "v1.34.1")
	t.Logf("the first control plane machine is provisioned after %s", time.Since(start).Round(time.Second))

	f.waitFor(ctx, "the worker waits for kubeadm's join data", topologyWait, func(ctx context.Context) (bool, string, error) {
		var list infrav1.TerraformMachineList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			return false, "", err
		}
		for _, m := range list.Items {
			if m.Annotations[clonedFrom] != "df-md-0" {
				continue
			}
			conds := conditionsOf(mustUnstructured(f.t, &m))
			return strings.Contains(conds, infrav1.WaitingForBootstrapDataReason), conds, nil
		}
		return false, "no worker TerraformMachine yet", nil
	})
	if runs := f.workerRuns(); len(runs) > 0 {
		t.Errorf("a worker without bootstrap data ran Jobs: %v", runs)
	}

	f.teardownTopology(ctx, objs, append(slices.Collect(maps.Keys(controlPlane)), "TerraformCluster/df"))
	t.Logf("deleted after %s", time.Since(start).Round(time.Second))
}

// workerRuns are the runs of the flow's TerraformMachines cloned from the
// worker template, by name.
func (f *flow) workerRuns() []string {
	var out []string
	for _, r := range f.env.Node.Runs() {
		if r.Namespace == f.ns && strings.HasPrefix(r.Labels[infrav1.OwnerNameLabel], "df-md-0") {
			out = append(out, r.Labels[infrav1.OwnerNameLabel])
		}
	}
	return out
}

// nudgeKubeadm touches the namespace's KubeadmControlPlanes every 10 s
// until the returned stop is called. With no workload cluster to reach,
// each of a kubeadm control plane's passes fails its status update, and
// controller-runtime retries a failing object with a backoff that doubles
// up to 16 minutes: on a loaded machine the pass that would create the
// first machine can come long after the infrastructure is ready. An
// update wakes the controller at once, as a real workload cluster's
// answer would have kept the backoff short.
func (f *flow) nudgeKubeadm(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = wait.PollUntilContextCancel(ctx, 10*time.Second, false, func(ctx context.Context) (bool, error) {
			var list unstructured.UnstructuredList
			list.SetAPIVersion("controlplane.cluster.x-k8s.io/v1beta2")
			list.SetKind("KubeadmControlPlaneList")
			if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
				return false, nil
			}
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"test.captf.io/nudge":"%d"}}}`, time.Now().UnixNano())
			for i := range list.Items {
				_ = f.env.Client.Patch(ctx, &list.Items[i], client.RawPatch(types.MergePatchType, patch))
			}
			return false, nil
		})
	})
	return func() {
		cancel()
		wg.Wait()
	}
}
