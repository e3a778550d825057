package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/test/envtest"
)

// Run is one pod the kubelet ran the runner for.
type Run = localnode.Run

// Kubelet runs the pods of CAPTF Jobs on its own Node.
type Kubelet struct {
	*localnode.Node
}

// Image is what a module image reference holds on this node: the module
// directory (the image's /captf/module) and the runtime of the tool cache
// that plays /captf/runtime, "tofu" or "terraform". Every image gets the
// tool cache's provider mirror as /captf/providers.
type Image struct {
	ModuleDir string
	Runtime   string
}

// Runtimes are the runtimes an Image may name.
var Runtimes = []string{"tofu", "terraform"}

// ExampleModules are the modules of examples/modules.
var ExampleModules = []string{"noop-cluster", "noop-machine", "noop-machinepool", "slow"}

// ExampleImage is the reference ExampleImages gives a module and runtime:
// local/<module>:<runtime>.
func ExampleImage(module, runtime string) string {
	return "local/" + module + ":" + runtime
}

// ExampleImages maps ExampleImage(module, runtime) to the example module
// for every module of examples/modules and both runtimes.
func ExampleImages(t testing.TB) map[string]Image {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]Image{}
	for _, m := range ExampleModules {
		for _, rt := range Runtimes {
			images[ExampleImage(m, rt)] = Image{ModuleDir: filepath.Join(root, "examples", "modules", m), Runtime: rt}
		}
	}
	return images
}

// Start registers a Node and plays its kubelet until the test ends: every
// pending pod labelled captf.io/managed=true that no other kubelet took is
// bound to the Node and run, in-process (localnode.ModeInProcess). images
// says which module image references exist; a missing module directory or
// runtime fails the test. Problems of the kubelet itself fail the test
// when it ends; a failed test gets the pod logs.
func Start(t testing.TB, env *envtest.Env, images map[string]Image) *Kubelet {
	t.Helper()
	return StartIn(t, env, "", images)
}

// StartIn is Start for the pods of one namespace only: tests that run side
// by side, each in its namespace, each run their own kubelet.
func StartIn(t testing.TB, env *envtest.Env, namespace string, images map[string]Image) *Kubelet {
	t.Helper()
	envtest.Require(t, env)
	// Not t.TempDir: the path of a test's directory grows with the test's
	// name, and a provider's plugin socket under the pod's TMPDIR must fit
	// the 108 bytes of a unix socket path.
	dir, err := os.MkdirTemp("", "kubelet-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	kc, err := env.ControlPlane.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	node, err := localnode.Start(context.Background(), localnode.Options{
		Kubeconfig: kubeconfig, Images: moduleImages(t, env.Tools, images), StateDir: dir,
		Mode: localnode.ModeInProcess, LabelSelector: infrav1.ManagedLabel + "=true", Namespace: namespace, Log: logr.Discard(),
		PullBackoff: pullBackoff, PullBackoffMax: 2 * pullBackoff,
	})
	if err != nil {
		t.Fatalf("kubelet: %v", err)
	}
	k := &Kubelet{Node: node}
	t.Cleanup(func() { k.stop(t) })
	return k
}

// pullBackoff is how long a pod waits to pull again an image it could not
// pull, at first (a kubelet's 10 s), and half the longest wait: the tests
// that push an image late see it pulled within two seconds.
const pullBackoff = time.Second

// Push gives the kubelet the module image ref, as a push to a
// registry would: a pod that could not pull it pulls it at its next try.
func (k *Kubelet) Push(t testing.TB, env *envtest.Env, ref string, img Image) {
	t.Helper()
	for r, i := range moduleImages(t, env.Tools, map[string]Image{ref: img}) {
		if err := k.AddImage(r, i); err != nil {
			t.Fatalf("kubelet: %v", err)
		}
	}
}

// moduleImages lays out each Image per the image contract; a missing
// module directory or runtime fails the test.
func moduleImages(t testing.TB, tools string, images map[string]Image) map[string]localnode.Image {
	t.Helper()
	providers := filepath.Join(tools, "providers")
	if st, err := os.Stat(providers); err != nil || !st.IsDir() {
		providers = ""
	}
	out := make(map[string]localnode.Image, len(images))
	for ref, img := range images {
		if img.Runtime != "tofu" && img.Runtime != "terraform" {
			t.Fatalf("kubelet: image %s: runtime %q is neither tofu nor terraform", ref, img.Runtime)
		}
		if st, err := os.Stat(img.ModuleDir); err != nil || !st.IsDir() {
			t.Fatalf("kubelet: image %s: the module directory %s is missing", ref, img.ModuleDir)
		}
		bin := filepath.Join(tools, "bin", img.Runtime)
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("FAIL: %s is missing; run `make tools` (or `make test`) to build the runtimes", bin)
		}
		out[ref] = localnode.ModuleImage(img.ModuleDir, bin, providers)
	}
	return out
}

// stop ends the kubelet when the test ends: runs still going get SIGTERM
// and report their end, then the Node goes.
func (k *Kubelet) stop(t testing.TB) {
	k.Stop()
	for _, p := range k.Problems() {
		t.Errorf("kubelet: %s", p)
	}
	if t.Failed() {
		for _, r := range k.Runs() {
			t.Logf("kubelet: log of pod %s/%s (%s, exit %d):\n%s", r.Namespace, r.Pod, r.Op, r.ExitCode, r.Log)
		}
	}
}
