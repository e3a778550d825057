package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// QuickstartNamespace is where the quickstart's workload objects live.
const QuickstartNamespace = "default"

// Demo shows CAPTF at work with examples/quickstart: it creates a Cluster,
// two Machines and a MachinePool with their CAPTF infrastructure, waits
// until CAPTF has applied every module and Cluster API has taken the
// results (endpoint, providerIDs), lists the objects with their status,
// shows invalid objects being rejected with their fields named, runs a
// MachineDeployment (examples/machinedeployment: created, scaled, rolled
// out to another template), then deletes the Cluster, waits until Cluster
// API and CAPTF have destroyed everything, and checks that nothing CAPTF
// made is left.
func (e *Env) Demo(ctx context.Context, out io.Writer) error {
	start := time.Now()
	dir := filepath.Join(e.Repo, "examples", "quickstart")
	objs, err := ReadManifestDir(dir)
	if err != nil {
		return err
	}
	if err := e.useDemoImages(objs); err != nil {
		return err
	}
	infra, capi := ofKinds(objs, workloadKinds...), ofKinds(objs, "Cluster", "Machine", "MachinePool")
	fmt.Fprintf(out, "\nCreating the quickstart (%s): %d objects, among them %s\n", dir, len(objs), names(capi))
	if err := Create(ctx, e.Client, objs); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nWaiting for CAPTF to provision the infrastructure (an apply Job each, run by the local node)")
	if err := e.waitEach(ctx, out, start, infra, provisioned); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nWaiting for Cluster API to take the results")
	if err := e.waitEach(ctx, out, start, capi, adopted); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"get", "clusters,machines,machinepools", "-n", QuickstartNamespace, "-o", "wide"},
		{"get", "terraformclusters,terraformmachines,terraformmachinepools", "-n", QuickstartNamespace, "-o", "wide"},
		{"get", "jobs,pods", "-n", QuickstartNamespace},
	} {
		if err := e.kubectl(out, args...); err != nil {
			return err
		}
	}
	for _, bad := range []string{"invalid-machine.yaml", "invalid-env.yaml"} {
		if err := e.showRejection(ctx, out, filepath.Join(e.Repo, "examples", "api-tour", bad)); err != nil {
			return err
		}
	}
	workers, err := e.demoMachineDeployment(ctx, out, start)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\nDeleting the Cluster: Cluster API deletes its Machines, its MachineDeployment, its MachinePool and their infrastructure; CAPTF destroys each first")
	destroyStart := time.Now()
	if err := Delete(ctx, e.Client, ofKinds(objs, "Cluster")); err != nil {
		return err
	}
	if err := e.waitEach(ctx, out, destroyStart, append(capi, infra...), gone); err != nil {
		return err
	}
	if err := e.waitMachines(ctx, io.Discard, destroyStart, demoTemplateV2, 0); err != nil {
		return err
	}
	objs = append(objs, workers...)
	destroys, err := e.destroyRuns(infra)
	if err != nil {
		return err
	}
	for _, r := range destroys {
		fmt.Fprintf(out, "  destroy Job %s ran on the local node and exited %d\n", r.Job, r.ExitCode)
	}
	fmt.Fprintln(out, "\nDeleting the rest of the quickstart (bootstrap data, credentials, identity)")
	if err := Delete(ctx, e.Client, withoutKind(objs, "Namespace")); err != nil {
		return err
	}
	if err := e.waitNothingLeft(ctx, objs); err != nil {
		return err
	}
	fmt.Fprintf(out, "Nothing is left: no CAPTF Secret (state, per-run, credentials mirror), Lease, Job or pod. The demo took %s.\n",
		time.Since(start).Round(time.Second))
	if len(destroys) > 0 {
		fmt.Fprintf(out, "Pod logs are kept until the next start, e.g.: go run ./cmd/captf-dev logs %s\n", destroys[0].Job)
	}
	return nil
}

func (e *Env) showRejection(ctx context.Context, out io.Writer, path string) error {
	bad, err := ReadManifests(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nCreating %s, which breaks the API's rules:\n", filepath.Base(path))
	err = Create(ctx, e.Client, bad)
	if !apierrors.IsInvalid(err) {
		return fmt.Errorf("the invalid object was not rejected as invalid: %w", err)
	}
	fmt.Fprintf(out, "  rejected: %v\n", err)
	return nil
}

// ofKinds are the objects of the given kinds, in order.
func ofKinds(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var kept []*unstructured.Unstructured
	for _, o := range objs {
		for _, k := range kinds {
			if o.GetKind() == k {
				kept = append(kept, o)
			}
		}
	}
	return kept
}

func withoutKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var kept []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != kind {
			kept = append(kept, o)
		}
	}
	return kept
}

func names(objs []*unstructured.Unstructured) string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+" "+o.GetName())
	}
	return strings.Join(out, ", ")
}

// exists says whether an object is still there.
func exists(ctx context.Context, c client.Client, o *unstructured.Unstructured) (bool, error) {
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(o.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(o), probe)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// kubectl runs the tool cache's kubectl against the environment.
func (e *Env) kubectl(out io.Writer, args ...string) error {
	bin := filepath.Join(e.Tools, "bin", "kubectl")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("kubectl is missing from %s: run `make tools`", e.Tools)
	}
	fmt.Fprintf(out, "\n$ kubectl %s\n", strings.Join(args, " "))
	cmd := exec.Command(bin, append([]string{"--kubeconfig", e.Kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}
