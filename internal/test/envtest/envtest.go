// Package envtest starts the real control plane every CAPTF integration test
// runs against: etcd and kube-apiserver (and, on request,
// kube-controller-manager) built by hack/tools, with CAPTF's CRDs installed.
//
// Tests find the binaries through one environment variable, CAPTF_TOOLS,
// which `make test` sets to the tool cache. When the tools are missing a
// test fails with a message saying how to build them under CI=true, and
// skips with that message elsewhere; it never passes silently.
package envtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// ToolsEnv is the environment variable naming the tool cache directory
// (`make -s tools-dir`).
const ToolsEnv = "CAPTF_TOOLS"

// Env is a running control plane.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is a client for Config with CAPTF's and core kinds registered.
	Client client.Client
	// Scheme holds every kind Client knows.
	Scheme *runtime.Scheme
	// Tools is the tool cache directory.
	Tools string

	env *crenvtest.Environment
}

// ErrToolsMissing is returned when CAPTF_TOOLS does not point at a built
// tool cache.
var ErrToolsMissing = errors.New("the control plane binaries are missing")

// ToolsDir returns the tool cache directory after checking that the named
// binaries exist in its bin/ directory.
func ToolsDir(binaries ...string) (string, error) {
	dir := os.Getenv(ToolsEnv)
	if dir == "" {
		return "", fmt.Errorf("%w: %s is not set; run the tests with `make test`, which builds the tools and sets it", ErrToolsMissing, ToolsEnv)
	}
	for _, b := range binaries {
		p := filepath.Join(dir, "bin", b)
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return "", fmt.Errorf("%w: %s has no %s; run `make tools` (or `make test`) to build it", ErrToolsMissing, dir, p)
		}
	}
	return dir, nil
}

// RepoRoot returns the root of the CAPTF module, found by walking up from
// the working directory (a test's package directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module captf.io/captf\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the captf.io/captf module root above the working directory")
		}
		dir = parent
	}
}

// NewScheme returns a scheme with the core Kubernetes kinds and CAPTF's.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := infrav1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Start starts etcd and kube-apiserver from the tool cache and installs
// CAPTF's CRDs from config/crd/bases.
func Start() (*Env, error) {
	tools, err := ToolsDir("etcd", "kube-apiserver")
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	env := &crenvtest.Environment{
		BinaryAssetsDirectory:    filepath.Join(tools, "bin"),
		CRDDirectoryPaths:        []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing:    true,
		Scheme:                   s,
		ControlPlaneStartTimeout: time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	// KUBEBUILDER_ASSETS would override BinaryAssetsDirectory; the tool
	// cache is the only source of binaries.
	if err := os.Unsetenv("KUBEBUILDER_ASSETS"); err != nil {
		return nil, err
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the control plane from %s: %w", tools, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Client: c, Scheme: s, Tools: tools, env: env}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	return e.env.Stop()
}

// Main runs a package's tests against one shared control plane and returns
// the exit code for os.Exit. *env is nil while the tools are missing outside
// CI, so that Require skips each test with the reason; under CI=true missing
// tools fail the run.
func Main(m *testing.M, env **Env) int {
	e, err := Start()
	switch {
	case err != nil && errors.Is(err, ErrToolsMissing) && os.Getenv("CI") != "true":
		skipReason = err.Error()
		fmt.Fprintln(os.Stderr, "envtest:", err)
	case err != nil:
		fmt.Fprintln(os.Stderr, "envtest: FAIL:", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "envtest: stopping the control plane:", err)
	}
	return code
}

var skipReason string

// Require skips the test, naming the reason, when the control plane could
// not start because the tools are missing (outside CI only).
func Require(t testing.TB, env *Env) {
	t.Helper()
	if env == nil {
		t.Skipf("SKIP (not in CI): %s", skipReason)
	}
}
