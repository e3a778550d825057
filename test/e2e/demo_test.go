// Package e2e runs CAPTF's local environment end to end, the way a user
// runs it from the README.
package e2e

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/contract"
)

// toolsOrSkip returns the tool cache, skipping the test (failing it under
// CI=true) when a binary the environment runs is missing.
func toolsOrSkip(t *testing.T) string {
	t.Helper()
	return envtest.RequireTools(t, "etcd", "kube-apiserver", "kube-controller-manager", "kubectl", "capi-manager", "tofu", "terraform")
}

// tail returns the last n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// The README's demo: CAPTF provisions a cluster, two machines (one per
// runtime) and a machine pool through the real Cluster API manager, with
// real runs on the local node; the real Cluster API takes the results;
// invalid objects are rejected naming their fields; a MachineDeployment is
// created, scaled and rolled out to another template; deleting the Cluster
// destroys everything with destroy Jobs and nothing is left.
//
// Not parallel: its checks cover the whole shared environment (every run of
// the local node, every CAPTF Secret), so it runs before the flows start.
func TestQuickstartProvisionsAndDestroys(t *testing.T) {
	env := sharedEnv(t)
	// The demo's budget starts once the environment is up: on a machine
	// whose caches are cold, starting it builds every image and binary
	// (6 min 32 s measured beside the other packages), which left the
	// demo a minute and a half.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// The manager image, built again from this checkout as `make images`
	// builds it, beside the demo: the runner each Job copies must be its.
	// Its binaries go where the environments link theirs: go build links
	// them again there only when they are not this checkout's (that two
	// links give the same bytes is internal/imagebuild's test).
	managerDigest := make(chan string, 1)
	built := make(chan struct{})
	t.Cleanup(func() { <-built })
	bins, err := devenv.ManagerBinaries()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(built)
		img, err := imagebuild.ManagerImage(ctx, env.Repo, bins, runtime.GOARCH, imagebuild.Meta{Version: "dev"})
		if err != nil {
			t.Errorf("building the manager image: %v", err)
			managerDigest <- ""
			return
		}
		d, err := img.Digest()
		if err != nil {
			t.Error(err)
		}
		managerDigest <- d.String()
	}()
	var out bytes.Buffer
	// The pool runs a module author's image, as `captf-dev demo
	// --runtime=terraform --machinepool-module DIR` builds it: the example
	// pool module, copied out of this repository, laid over the Terraform
	// base image with its providers, imported and linted.
	poolDir, err := copyModule(filepath.Join("..", "..", "examples", "modules", "noop-machinepool"), filepath.Join(t.TempDir(), "noop-machinepool"), nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := devenv.DefaultImageStore()
	if err != nil {
		t.Fatal(err)
	}
	env.DemoImages, err = devenv.PrepareDemoModules(ctx, &out, devenv.DemoModules{
		Dirs: map[contract.Role]string{contract.RoleMachinePool: poolDir}, Runtime: "terraform",
		Tools: env.Tools, Store: store, Layouts: t.TempDir(),
	})
	if err != nil {
		t.Fatalf("building the pool module's image: %v\n%s", err, out.String())
	}
	if err := env.Demo(ctx, &out); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"TerraformCluster/quickstart            provisioned, endpoint ",
		"TerraformMachine/quickstart-cp-0       provisioned, providerID noop://default/quickstart-cp-0/",
		"TerraformMachine/quickstart-worker-0   provisioned, providerID noop://default/quickstart-worker-0/",
		"TerraformMachinePool/quickstart-pool   provisioned, 2 instances: noop://default/quickstart-pool/",
		"Cluster/quickstart                     infrastructure provisioned",
		"Machine/quickstart-cp-0                providerID noop://default/quickstart-cp-0/",
		"MachinePool/quickstart-pool            infrastructure provisioned",
		"READY   PROVISIONED",
		"spec.drift.intervalSeconds",
		"lockTimeoutSeconds must be lower than activeDeadlineSeconds",
		"spec.jobs.env[1].name",
		"0 from quickstart-workers-v1, 3 from quickstart-workers-v2; 3 of 3 from quickstart-workers-v2 provisioned",
		"template quickstart-workers-v2 tells the cluster autoscaler each machine brings cpu 2, memory 4Gi",
		"TerraformMachine/quickstart-cp-0       destroyed and deleted",
		"TerraformCluster/quickstart            destroyed and deleted",
		"Nothing is left",
		"Building the machinepool module " + poolDir + " on terraform",
		"  local/dev/noop-machinepool:terraform@sha256:",
		"0 error(s), 0 warning(s)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out.String())
		}
	}

	// Every object had its apply and its destroy run for real, both
	// runtimes took part, and the runner saw the image contract's paths.
	runs := env.Node.Runs()
	for _, object := range []string{"c-quickstart", "m-quickstart-cp-0", "m-quickstart-worker-0", "mp-quickstart-pool"} {
		for _, op := range []string{"apply", "destroy"} {
			prefix := "captf-" + object + "-" + op + "-"
			if !slices.ContainsFunc(runs, func(r localnode.Run) bool { return strings.HasPrefix(r.Job, prefix) && r.ExitCode == 0 }) {
				t.Errorf("no successful Job %s* ran on the local node", prefix)
			}
		}
	}
	if !slices.ContainsFunc(runs, func(r localnode.Run) bool {
		return strings.HasPrefix(r.Job, "captf-mp-quickstart-pool-apply-") && r.Image == "local/dev/noop-machinepool:terraform" && r.ExitCode == 0
	}) {
		t.Error("the pool's apply did not run the image built from its module directory")
	}
	for _, rt := range devenv.RuntimeNames {
		if !slices.ContainsFunc(runs, func(r localnode.Run) bool { return strings.HasSuffix(r.Image, ":"+rt) && r.ExitCode == 0 }) {
			t.Errorf("no run used %s", rt)
		}
	}
	if env.Node.Mode() == localnode.ModeNamespace {
		for _, r := range runs {
			if cmd := r.Result.Runtime.Command; len(cmd) != 1 || cmd[0] != jobs.RuntimePath {
				t.Errorf("the runner of %s ran the runtime as %q, want the image contract's %s", r.Pod, cmd, jobs.RuntimePath)
			}
		}
	}
	// The images are those users run: the example modules' images are
	// built over the module base images, and each Job's init container
	// ran the manager image's /runner.
	manager := <-managerDigest
	stored := map[string]string{} // the image ID of each example image the store holds, by reference
	for _, m := range []string{"noop-cluster", "noop-machine", "noop-machinepool"} {
		for _, rt := range devenv.RuntimeNames {
			ref := devenv.ExampleImage(m, rt)
			digest, err := localnode.ImageDigest(store, ref)
			labels, lerr := localnode.ImageLabels(store, ref)
			if err != nil || digest == "" || lerr != nil || labels["io.captf.runtime.version"] == "" || labels["io.captf.role"] == "" {
				t.Errorf("the store holds %s with the digest %q (%v) and the labels %v (%v), want one built over the base image", ref, digest, err, labels, lerr)
			}
			stored[ref] = "local/" + m + "@" + digest
		}
	}
	for _, r := range runs {
		if env.Node.Mode() == localnode.ModeNamespace && manager != "" && r.InitImageIDs[jobs.RunnerContainer] != "local/captf-manager@"+manager {
			t.Errorf("the runner of %s came from %q, want the manager image local/captf-manager@%s", r.Pod, r.InitImageIDs[jobs.RunnerContainer], manager)
		}
		if !strings.HasPrefix(r.Image, "local/noop-") {
			continue
		}
		// A destroy runs the image its apply ran, by that image's ID.
		want, tagged := stored[r.Image]
		if !tagged && !slices.Contains(slices.Collect(maps.Values(stored)), r.Image) {
			t.Errorf("%s ran %s, which is no example image of the store", r.Pod, r.Image)
		}
		if tagged && r.ImageID != want || !tagged && r.ImageID != r.Image {
			t.Errorf("%s ran %s as %q, want the image built in the store", r.Pod, r.Image, r.ImageID)
		}
	}
	destroy := ""
	for _, r := range runs {
		if strings.HasPrefix(r.Job, "captf-m-quickstart-cp-0-destroy-") {
			destroy = r.Job
		}
	}
	if log, err := devenv.ReadLog(env.StateDir, devenv.QuickstartNamespace, destroy, ""); err != nil || !strings.Contains(string(log), "Destroy complete") {
		t.Errorf("`captf-dev logs %s` does not show the destroy: %v\n%s", destroy, err, log)
	}

	// What a user would list afterwards: no CAPTF Secret, Job or pod.
	var secrets corev1.SecretList
	if err := env.Client.List(ctx, &secrets, client.MatchingLabels{infrav1.ManagedLabel: "true"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		t.Errorf("a CAPTF Secret is left: %s/%s", s.Namespace, s.Name)
	}
	var jobList batchv1.JobList
	if err := env.Client.List(ctx, &jobList); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobList.Items {
		t.Errorf("a Job is left: %s/%s", j.Namespace, j.Name)
	}
}
