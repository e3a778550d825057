package devenv

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// clonedFromAnnotation is what Cluster API writes on a TerraformMachine it
// cloned: the template's name.
const clonedFromAnnotation = "cluster.x-k8s.io/cloned-from-name"

// The demo's MachineDeployment, from examples/machinedeployment.
const (
	demoMD         = "quickstart-workers"
	demoTemplateV1 = "quickstart-workers-v1"
	demoTemplateV2 = "quickstart-workers-v2"
)

// demoMachineDeployment shows workers from a MachineDeployment in the
// quickstart's cluster: 2 machines cloned from a template on Terraform,
// scaled to 3, rolled out to a template on OpenTofu (each old machine
// destroyed by a Job, each new one provisioned). It returns the example's
// objects, which go with the Cluster.
func (e *Env) demoMachineDeployment(ctx context.Context, out io.Writer, start time.Time) ([]*unstructured.Unstructured, error) {
	dir := filepath.Join(e.Repo, "examples", "machinedeployment")
	objs, err := ReadManifestDir(dir)
	if err != nil {
		return nil, err
	}
	if err := e.useDemoImages(objs); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "\nCreating MachineDeployment %s (%s): Cluster API clones 2 TerraformMachines from template %s (Terraform)\n", demoMD, dir, demoTemplateV1)
	if err := Create(ctx, e.Client, objs); err != nil {
		return nil, err
	}
	if err := e.waitMachines(ctx, out, start, demoTemplateV1, 2); err != nil {
		return nil, err
	}
	fmt.Fprintln(out, "\nScaling it to 3")
	if err := e.patchMD(ctx, `{"spec":{"replicas":3}}`); err != nil {
		return nil, err
	}
	if err := e.waitMachines(ctx, out, start, demoTemplateV1, 3); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "\nRolling it out to template %s (OpenTofu): each old machine is destroyed by a Job, each new one provisioned\n", demoTemplateV2)
	if err := e.patchMD(ctx, `{"spec":{"template":{"spec":{"infrastructureRef":{"name":"`+demoTemplateV2+`"}}}}}`); err != nil {
		return nil, err
	}
	if err := e.waitMachines(ctx, out, start, demoTemplateV2, 3); err != nil {
		return nil, err
	}
	tmt := &infrav1.TerraformMachineTemplate{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: QuickstartNamespace, Name: demoTemplateV2}, tmt); err == nil && tmt.Status.Capacity != nil {
		fmt.Fprintf(out, "  template %s tells the cluster autoscaler each machine brings cpu %s, memory %s\n",
			demoTemplateV2, tmt.Status.Capacity.Cpu(), tmt.Status.Capacity.Memory())
	}
	return objs, e.kubectl(out, "get", "machinedeployments,machinesets", "-n", QuickstartNamespace)
}

// patchMD merge-patches the demo's MachineDeployment.
func (e *Env) patchMD(ctx context.Context, patch string) error {
	md := &unstructured.Unstructured{}
	md.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	md.SetKind("MachineDeployment")
	md.SetNamespace(QuickstartNamespace)
	md.SetName(demoMD)
	return e.Client.Patch(ctx, md, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// waitMachines waits until the quickstart's namespace holds exactly n
// TerraformMachines cloned from the demo's templates, all from template
// and provisioned, printing each count as it changes.
func (e *Env) waitMachines(ctx context.Context, out io.Writer, start time.Time, template string, n int) error {
	last := ""
	why := ""
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		var list infrav1.TerraformMachineList
		if err := e.Client.List(ctx, &list, client.InNamespace(QuickstartNamespace)); err != nil {
			return false, err
		}
		counts := map[string]int{}
		ready, others := 0, 0
		for _, m := range list.Items {
			from := m.Annotations[clonedFromAnnotation]
			if from != demoTemplateV1 && from != demoTemplateV2 {
				continue
			}
			counts[from]++
			switch {
			case from != template || m.DeletionTimestamp != nil:
				others++
			case m.Status.Initialization.Provisioned != nil && *m.Status.Initialization.Provisioned:
				ready++
			}
		}
		line := fmt.Sprintf("%d from %s, %d from %s; %d of %d from %s provisioned", counts[demoTemplateV1], demoTemplateV1, counts[demoTemplateV2], demoTemplateV2, ready, n, template)
		if line != last {
			fmt.Fprintf(out, "  machines: %s (%s)\n", line, time.Since(start).Round(time.Second))
			last = line
		}
		why = line
		return ready == n && others == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d machines from %s: %w; %s", n, template, err, why)
	}
	return nil
}
