package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/test/envtest"
)

// testModules are this package's own module images (testdata/modules),
// which the local node serves for both runtimes as local/<module>:<runtime>.
var testModules = []string{"creds-cluster", "large-cluster"}

// slowDestroy, added to the noop cluster, makes its destroy slow before it
// destroys anything: its resource depends on every other, so a destroy
// starts with it, and its destroy-time provisioner waits before the
// resource goes. A destroy Job with a deadline of a second is stopped with
// every resource still in its state, however fast the machine.
const slowDestroy = `resource "terraform_data" "slow_to_destroy" {
  input = [random_pet.cluster.id, terraform_data.network.id, terraform_data.load_balancer.id]
  provisioner "local-exec" {
    when    = destroy
    command = "sleep 10"
  }
}
`

// shared is the one environment of the package. Its tests share it: a
// process can run only one CAPTF manager (controller names are global),
// and starting one takes a while. Each test works in namespaces of its own.
var shared struct {
	once sync.Once
	env  *devenv.Env
	err  error
	dir  string
	log  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.env != nil {
		code = stopShared(code)
	}
	os.Exit(code)
}

// sharedEnv returns the environment, starting it on first use as
// `captf-dev up` does, with the manager's and the node's logs in its state
// directory.
func sharedEnv(t *testing.T) *devenv.Env {
	t.Helper()
	tools := toolsOrSkip(t)
	shared.once.Do(func() {
		start := time.Now()
		shared.env, shared.err = startShared(tools)
		t.Logf("the environment started in %s; its files are in %s", time.Since(start).Round(time.Second), shared.dir)
	})
	if shared.err != nil {
		t.Fatalf("starting the environment: %v (files in %s)", shared.err, shared.dir)
	}
	return shared.env
}

func startShared(tools string) (*devenv.Env, error) {
	root, err := envtest.RepoRoot()
	if err != nil {
		return nil, err
	}
	// Short, for the in-process fallback: a provider's plugin socket under
	// a pod's TMPDIR must fit the 108 bytes of a unix socket path.
	if shared.dir, err = os.MkdirTemp("", "captf-e2e-"); err != nil {
		return nil, err
	}
	images := map[string]localnode.Image{}
	example := filepath.Join(root, "examples", "modules", "noop-cluster")
	for _, module := range testModules {
		dir, err := testModule(root, module, filepath.Join(shared.dir, "modules", module))
		if err != nil {
			return nil, err
		}
		for _, rt := range devenv.RuntimeNames {
			images[devenv.ExampleImage(module, rt)] = devenv.ModuleImage(dir, rt, tools)
		}
	}
	// A cluster module that breaks the contract: no exports output.
	broken, err := copyModule(example, filepath.Join(shared.dir, "modules", "no-exports-cluster"), func(text string) (string, error) {
		return withoutOutput(text, "exports")
	})
	if err != nil {
		return nil, err
	}
	// The noop cluster, but slow to destroy (see slowDestroy).
	slow, err := copyModule(example, filepath.Join(shared.dir, "modules", "slow-destroy-cluster"), nil)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(slow, "slow.tf"), []byte(slowDestroy), 0o644); err != nil {
		return nil, err
	}
	for name, dir := range map[string]string{"no-exports-cluster": broken, "slow-destroy-cluster": slow} {
		for _, rt := range devenv.RuntimeNames {
			images[devenv.ExampleImage(name, rt)] = devenv.ModuleImage(dir, rt, tools)
		}
	}
	shared.log = filepath.Join(shared.dir, "manager.log")
	managerLog, err := os.Create(shared.log)
	if err != nil {
		return nil, err
	}
	capiLog, err := os.Create(filepath.Join(shared.dir, "capi.log"))
	if err != nil {
		return nil, err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(managerLog)))
	return devenv.Up(context.Background(), devenv.Options{
		Tools: tools, Repo: root, Kubeconfig: filepath.Join(shared.dir, "kubeconfig"), StateDir: shared.dir,
		Log: &bytes.Buffer{}, CAPILog: capiLog, NodeLog: zap.New(zap.WriteTo(managerLog)), ExtraImages: images,
		// An unpullable image is given up on sooner than in production
		// (2 min), so that its flow takes seconds.
		ImagePullGrace: 15 * time.Second,
		CrashOnPanic:   true,
		// The ClusterClass and cluster template flows need them.
		Kubeadm: true,
	})
}

// stopShared stops the environment. The local node's own failures fail
// the run; a failed run keeps the environment's files and shows the end
// of the manager's log.
func stopShared(code int) int {
	if err := shared.env.Down(); err != nil {
		fmt.Printf("stopping the environment: %v\n", err)
		code = 1
	}
	for _, p := range shared.env.Node.Problems() {
		fmt.Printf("local node: %s\n", p)
		code = 1
	}
	if code == 0 {
		_ = os.RemoveAll(shared.dir)
		return code
	}
	data, _ := os.ReadFile(shared.log)
	fmt.Printf("manager and node log (last 20 kB):\n%s\n", tail(data, 20<<10))
	fmt.Printf("the environment's files are kept in %s (manager.log, capi.log, node/logs/<namespace>/<pod>/<container>.log)\n", shared.dir)
	return code
}

// testModule assembles one of this package's cluster modules in dst: its
// own files (testdata/modules/<module>) and the contract's variables.tf of
// the noop cluster example, which it would otherwise repeat.
func testModule(root, module, dst string) (string, error) {
	if _, err := copyModule(filepath.Join(root, "test", "e2e", "testdata", "modules", module), dst, nil); err != nil {
		return "", err
	}
	vars, err := os.ReadFile(filepath.Join(root, "examples", "modules", "noop-cluster", "variables.tf"))
	if err != nil {
		return "", err
	}
	return dst, os.WriteFile(filepath.Join(dst, "variables.tf"), vars, 0o644)
}

// copyModule copies the files of the module src to dst, passing each
// file's text through change (when not nil).
func copyModule(src, dst string, change func(text string) (string, error)) (string, error) {
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", err
		}
		text := string(b)
		if change != nil {
			if text, err = change(text); err != nil {
				return "", fmt.Errorf("%s: %w", e.Name(), err)
			}
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// withoutOutput removes the block of output name from a module file.
func withoutOutput(text, name string) (string, error) {
	start := strings.Index(text, "output \""+name+"\" {")
	if start < 0 {
		return text, nil
	}
	end := strings.Index(text[start:], "\n}\n")
	if end < 0 {
		return "", fmt.Errorf("output %s does not end", name)
	}
	return text[:start] + text[start+end+3:], nil
}
