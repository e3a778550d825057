package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/localnode"
)

// clonedFrom is the annotation Cluster API sets on a TerraformMachine it
// cloned: the template's name.
const clonedFrom = "cluster.x-k8s.io/cloned-from-name"

// machineDeployment is a MachineDeployment as its users run one, on the
// real Cluster API manager: 3 machines cloned from a template on
// Terraform; scaled to 5 and to 1, each removed machine destroyed by a
// Job; rolled out to a template on OpenTofu, the old machine destroyed and
// the new one provisioned by OpenTofu with the new inputs; then deleted,
// and nothing is left. With no workload cluster no Node ever joins, so
// the rollout takes a machine away before it adds one (maxSurge 0,
// maxUnavailable 1): the default strategy waits for the new machine's Node.
func machineDeployment(t *testing.T, ctx context.Context, f *flow) {
	objs := pick(f.quickstart("tofu"), f.base()...)
	md, err := devenv.ReadManifestDir(filepath.Join(f.env.Repo, "test", "e2e", "testdata", "machinedeployment"))
	if err != nil {
		t.Fatal(err)
	}
	var templates []*unstructured.Unstructured
	for _, o := range md {
		o.SetNamespace(f.ns)
		switch o.GetKind() {
		case "TerraformMachineTemplate":
			o.SetName("md-terraform")
			f.set(o, devenv.ExampleImage("noop-machine", "terraform"), "spec", "template", "spec", "source", "image")
			tofu := o.DeepCopy()
			tofu.SetName("md-tofu")
			f.set(tofu, devenv.ExampleImage("noop-machine", "tofu"), "spec", "template", "spec", "source", "image")
			templates = append(templates, tofu)
		case "MachineDeployment":
			f.set(o, int64(3), "spec", "replicas")
			f.set(o, "md-terraform", "spec", "template", "spec", "infrastructureRef", "name")
			f.set(o, map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": int64(1)}}, "spec", "rollout", "strategy")
		}
	}
	all := slices.Concat(objs, templates, md)
	start := time.Now()
	f.provision(ctx, all)
	three := f.waitMachines(ctx, 3, "md-terraform")
	t.Logf("3 machines provisioned after %s", time.Since(start).Round(time.Second))

	f.patchMD(ctx, `{"spec":{"replicas":5}}`)
	five := f.waitMachines(ctx, 5, "md-terraform")
	if missing := without(three, five); len(missing) > 0 {
		t.Errorf("scaling up replaced machines: %v", slices.Collect(maps.Keys(missing)))
	}
	f.patchMD(ctx, `{"spec":{"replicas":1}}`)
	one := f.waitMachines(ctx, 1, "md-terraform")
	f.waitDestroyed(ctx, without(five, one), "terraform")
	t.Logf("scaled 3 → 5 → 1 after %s", time.Since(start).Round(time.Second))

	f.patchMD(ctx, `{"spec":{"template":{"spec":{"infrastructureRef":{"name":"md-tofu"}}}}}`)
	rolled := f.waitMachines(ctx, 1, "md-tofu")
	f.waitDestroyed(ctx, one, "terraform")
	version := f.runtimeVersion("tofu")
	for key := range rolled {
		kind, name, _ := strings.Cut(key, "/")
		if !slices.ContainsFunc(f.runs(kind, name, string(infrav1.OperationApply)), func(r localnode.Run) bool {
			return r.ExitCode == 0 && r.Result.Runtime.Version == version
		}) {
			t.Errorf("%s was not provisioned by OpenTofu %s, the new template's runtime", key, version)
		}
	}
	t.Logf("rolled out to the OpenTofu template after %s", time.Since(start).Round(time.Second))

	f.deleteWith(ctx, all, "MachineDeployment", "md", metav1.DeletePropagationBackground)
	f.waitDestroyed(ctx, rolled, "tofu")
	f.teardown(ctx, all, "tofu")
}

// waitMachines waits until the namespace holds exactly n TerraformMachines,
// none being deleted, all cloned from template and provisioned; it
// returns the resources each one's state holds, by kind/name.
func (f *flow) waitMachines(ctx context.Context, n int, template string) map[string]int {
	f.t.Helper()
	return f.waitClones(ctx, n, template, false)
}

// waitClones is waitMachines; with others, TerraformMachines cloned from
// other templates may be there too, in any state.
func (f *flow) waitClones(ctx context.Context, n int, template string, others bool) map[string]int {
	f.t.Helper()
	out := map[string]int{}
	what := fmt.Sprintf("%d machines from %s are provisioned, and no other", n, template)
	if others {
		what = fmt.Sprintf("%d machines from %s are provisioned", n, template)
	}
	f.waitFor(ctx, what, 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		var list infrav1.TerraformMachineList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			return false, "", err
		}
		clear(out)
		for _, m := range list.Items {
			if others && m.Annotations[clonedFrom] != template {
				continue
			}
			if m.DeletionTimestamp != nil || m.Annotations[clonedFrom] != template || !provisionedReady(m.Status.WorkspaceStatus) {
				return false, fmt.Sprintf("%d TerraformMachines; %s from %s, deleting %v, %s", len(list.Items), m.Name, m.Annotations[clonedFrom], m.DeletionTimestamp != nil, ready(m.Status.Conditions)), nil
			}
			count, err := f.instances(ctx, "TerraformMachine", m.Name)
			if err != nil {
				return false, "", err
			}
			out["TerraformMachine/"+m.Name] = count
		}
		return len(out) == n, fmt.Sprintf("%d TerraformMachines", len(out)), nil
	})
	return maps.Clone(out)
}

// patchMD merge-patches the MachineDeployment md.
func (f *flow) patchMD(ctx context.Context, patch string) {
	f.t.Helper()
	md := &unstructured.Unstructured{}
	md.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachineDeployment"))
	md.SetNamespace(f.ns)
	md.SetName("md")
	if err := f.env.Client.Patch(ctx, md, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		f.t.Fatalf("patching the MachineDeployment with %s: %v", patch, err)
	}
}

// without is a's entries that b lacks.
func without(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		if _, ok := b[k]; !ok {
			out[k] = v
		}
	}
	return out
}
