// Package envtest runs CAPTF's integration tests against the real control
// plane (internal/controlplane): etcd and kube-apiserver built by
// hack/tools, with CAPTF's CRDs installed.
//
// Tests find the binaries through one environment variable, CAPTF_TOOLS,
// which `make test` sets to the tool cache. When the tools are missing the
// run fails with a message saying how to build them under CI=true, and each
// test skips with that message elsewhere; it never passes silently.
package envtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/controlplane"
)

// ToolsEnv is the environment variable naming the tool cache directory
// (`make -s tools-dir`).
const ToolsEnv = "CAPTF_TOOLS"

// Options say what a package's tests need beyond etcd and kube-apiserver.
type Options struct {
	// ControllerManager starts kube-controller-manager (Job controller and
	// garbage collector).
	ControllerManager bool
	// Webhooks installs config/webhook, pointed at the local webhook
	// server of ControlPlane.WebhookServer.
	Webhooks bool
	// ClusterAPICRDs also installs Cluster API's CRDs from the tool cache.
	ClusterAPICRDs bool
}

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
	// ControlPlane is the running control plane.
	ControlPlane *controlplane.ControlPlane
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

// NewScheme returns a scheme with the core Kubernetes kinds, CAPTF's and
// Cluster API's.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, infrav1.AddToScheme, clusterv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Start starts the control plane from $CAPTF_TOOLS with CAPTF's CRDs.
func Start(opts Options) (*Env, error) {
	tools := os.Getenv(ToolsEnv)
	if tools == "" {
		return nil, fmt.Errorf("%w: %s is not set; run the tests with `make test`, which builds the tools and sets it",
			controlplane.ErrToolsMissing, ToolsEnv)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	var webhookDirs []string
	if opts.Webhooks {
		webhookDirs = []string{filepath.Join(root, "config", "webhook")}
	}
	crds := []string{filepath.Join(root, "config", "crd", "bases")}
	if opts.ClusterAPICRDs {
		crds = append(crds, filepath.Join(tools, "capi", "crd"))
	}
	cp, err := controlplane.Start(controlplane.Options{
		Tools:             tools,
		CRDDirs:           crds,
		Scheme:            s,
		ControllerManager: opts.ControllerManager,
		WebhookDirs:       webhookDirs,
	})
	if err != nil {
		return nil, err
	}
	c, err := client.New(cp.Config, client.Options{Scheme: s})
	if err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return &Env{Config: cp.Config, Client: c, Scheme: s, Tools: tools, ControlPlane: cp}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error {
	if e == nil {
		return nil
	}
	return e.ControlPlane.Stop()
}

// Main runs a package's tests against one shared control plane and returns
// the exit code for os.Exit. *env stays nil while the tools are missing
// outside CI, so that Require skips each test naming the reason; under
// CI=true missing tools fail the run. beforeStop runs after the tests,
// before the control plane stops (to stop what the tests started against
// it, such as a manager).
func Main(m *testing.M, env **Env, opts Options, beforeStop ...func()) int {
	e, err := Start(opts)
	switch {
	case err != nil && errors.Is(err, controlplane.ErrToolsMissing) && os.Getenv("CI") != "true":
		skipReason = err.Error()
		fmt.Fprintln(os.Stderr, "envtest:", err)
	case err != nil:
		fmt.Fprintln(os.Stderr, "envtest: FAIL:", err)
		return 1
	}
	*env = e
	code := m.Run()
	for _, f := range beforeStop {
		f()
	}
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

// RequireTools returns the tool cache of $CAPTF_TOOLS when it holds every
// binary of bins: a test without them fails under CI=true, naming what to
// build, and skips elsewhere.
func RequireTools(t testing.TB, bins ...string) string {
	t.Helper()
	tools := os.Getenv(ToolsEnv)
	err := controlplane.CheckTools(tools, bins...)
	if err == nil {
		return tools
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("FAIL: %v", err)
	}
	t.Skipf("SKIP (not in CI): %v", err)
	return ""
}
