//go:build e2eclusterctl

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
)

// clusterctl init and upgrade for real, as docs/getting-started.md walks
// through them: `clusterctl init` installs release v0.1.0 (with the local
// environment's Cluster API providers registered as they run), a cluster
// with machines and a pool is provisioned, `clusterctl upgrade plan`
// offers v0.1.1 and `clusterctl upgrade apply` installs it. Both releases
// are this tree; the manager of each runs out of band (the local node
// cannot run the Deployment clusterctl installs), stopped and started as
// the Deployment's rollout would. After the upgrade nothing is applied
// again and no state is lost: the pool's scale-up is its only apply, and
// deleting the Cluster destroys everything. Then `clusterctl delete`
// removes the provider.
func TestClusterctlInitAndUpgrade(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	tools := envtest.RequireTools(t, "clusterctl")
	e := startEnv(t, ctx, "captf-upgrade-", nil, "--kubeadm")
	f, cs := e.flow(t, "upgrade")
	repo := newClusterctlRepo(ctx, f, e, tools, "v0.1.0", "v0.1.1")

	repo.outOfBand(ctx, func() {
		repo.run(ctx, "init", "--infrastructure", "terraform:v0.1.0")
	})
	wantInventory(t, repo.inventory(ctx), map[string]string{
		"captf-system/infrastructure-terraform":                   "v0.1.0",
		"capi-system/cluster-api":                                 capiVersion,
		"capi-kubeadm-bootstrap-system/bootstrap-kubeadm":         capiVersion,
		"capi-kubeadm-control-plane-system/control-plane-kubeadm": capiVersion,
	})
	manager := e.startManager(t, "manager-v0.1.0")

	watching, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	jobs := watchJobs(watching, cs, f.ns)
	f.create(ctx, f.quickstart(""))
	named := []string{"TerraformCluster/quickstart", "TerraformMachine/quickstart-cp-0", "TerraformMachine/quickstart-worker-0"}
	f.waitFor(ctx, "the cluster, its machines and its pool of 2 are provisioned", jobWait, f.allProvisioned(named, 2, 2))
	before := f.stateSerials(ctx)

	plan, _ := repo.run(ctx, "upgrade", "plan")
	if !strings.Contains(plan, "v0.1.1") {
		t.Fatalf("clusterctl upgrade plan does not offer v0.1.1:\n%s", plan)
	}
	if err := manager.stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	upgraded := time.Now()
	repo.outOfBand(ctx, func() {
		repo.run(ctx, "upgrade", "apply", "--infrastructure", "terraform:v0.1.1")
	})
	if got := repo.inventory(ctx)["captf-system/infrastructure-terraform"]; got != "v0.1.1" {
		t.Fatalf("after the upgrade the inventory says CAPTF %s, want v0.1.1", got)
	}
	e.startManager(t, "manager-v0.1.1")

	// The new manager takes every object in hand without applying: each
	// gets a new generation that changes no input (its drift interval),
	// and reports its inputs applied on a pass over it.
	f.newGenerations(ctx)
	f.waitFor(ctx, "the upgraded manager reports every object's inputs applied", controllerWait, f.inputsApplied)
	if after := f.stateSerials(ctx); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the state changed across the upgrade: before %v, after %v", before, after)
	}
	f.scalePool(ctx, 3)
	f.waitFor(ctx, "the pool scales to 3 under the upgraded manager", jobWait, f.allProvisioned(named, 2, 3))
	var poolApplies []string
	for _, j := range jobs.snapshot() {
		switch {
		case !j.created.After(upgraded) || j.op != string(infrav1.OperationApply):
		case j.object() == "TerraformMachinePool/quickstart-pool":
			poolApplies = append(poolApplies, j.name)
		default:
			t.Errorf("after the upgrade %s ran apply Job %s: its inputs had not changed", j.object(), j.name)
		}
	}
	if len(poolApplies) != 1 {
		t.Errorf("after the upgrade the pool ran apply Jobs %v, want one: its scale-up", poolApplies)
	}

	f.deleteQuickstart(ctx)
	stopWatching()
	<-jobs.done
	destroyedObjects(t, jobs.snapshot(), append(named, "TerraformMachinePool/quickstart-pool"))

	// With its clusters gone, the provider goes.
	repo.run(ctx, "delete", "--infrastructure", "terraform")
	if v, ok := repo.inventory(ctx)["captf-system/infrastructure-terraform"]; ok {
		t.Errorf("after clusterctl delete the inventory still holds CAPTF %s", v)
	}
}

func wantInventory(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("clusterctl's inventory: %s is %q, want %q (inventory %v)", k, got[k], v, got)
		}
	}
}

// stateSerials is each CAPTF object's state serial, as its status reads
// it, by kind/name.
func (f *flow) stateSerials(ctx context.Context) map[string]int64 {
	out := map[string]int64{}
	for _, w := range f.workspaces(ctx) {
		out[w.name] = w.st.ObservedStateSerial
	}
	return out
}

// newGenerations gives each CAPTF object of the flow a new generation
// that changes none of its inputs: a drift interval of an hour.
func (f *flow) newGenerations(ctx context.Context) {
	f.t.Helper()
	for _, w := range f.workspaces(ctx) {
		kind, name, _ := strings.Cut(w.name, "/")
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(infrav1.GroupVersion.WithKind(kind))
		o.SetNamespace(f.ns)
		o.SetName(name)
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"drift":{"intervalSeconds":3600}}}`))
		if err := f.env.Client.Patch(ctx, o, patch); err != nil {
			f.t.Fatal(err)
		}
	}
}
