// Package devenv is CAPTF's embedded local environment: a real control plane
// started from the tool cache on this machine, with CAPTF's CRDs (and Cluster
// API's, when built) installed, for demos and end-to-end tests. It is never
// imported by the manager.
package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/controlplane"
)

// Env is a running local environment.
type Env struct {
	// Kubeconfig is the path of an admin kubeconfig for the environment.
	Kubeconfig string
	// Client reaches the API server as an admin.
	Client client.Client
	// Tools is the tool cache directory.
	Tools string
	// Repo is the CAPTF checkout (CRDs and examples are read from it).
	Repo string

	cp *controlplane.ControlPlane

	stopManager func()
	stopCAPI    func()
}

// Options configure Up.
type Options struct {
	// Tools is the tool cache directory.
	Tools string
	// Repo is the CAPTF checkout.
	Repo string
	// Kubeconfig is where to write the admin kubeconfig.
	Kubeconfig string
	// Log receives progress lines.
	Log io.Writer
	// ControllerLog receives kube-controller-manager's output.
	ControllerLog *os.File
	// CAPILog receives the Cluster API manager's output.
	CAPILog *os.File
}

func scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, infrav1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Up starts etcd, kube-apiserver and kube-controller-manager with CAPTF's
// CRDs (and Cluster API's when the tool cache has them) installed first, and
// writes an admin kubeconfig.
func Up(ctx context.Context, opts Options) (*Env, error) {
	s, err := scheme()
	if err != nil {
		return nil, err
	}
	crds := []string{filepath.Join(opts.Repo, "config", "crd", "bases")}
	if capi := filepath.Join(opts.Tools, "capi", "crd"); isDir(capi) {
		crds = append(crds, capi)
	}
	fmt.Fprintf(opts.Log, "Starting etcd, kube-apiserver and kube-controller-manager from %s\n", opts.Tools)
	cp, err := controlplane.Start(controlplane.Options{
		Tools: opts.Tools, CRDDirs: crds, Scheme: s,
		ControllerManager: true, Log: opts.ControllerLog,
		WebhookDirs: []string{filepath.Join(opts.Repo, "config", "webhook")},
	})
	if err != nil {
		return nil, err
	}
	env := &Env{Tools: opts.Tools, Repo: opts.Repo, Kubeconfig: opts.Kubeconfig, cp: cp}
	if err := env.writeKubeconfig(); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	if env.Client, err = client.New(cp.Config, client.Options{Scheme: s}); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	fmt.Fprintln(opts.Log, "Starting the Cluster API core manager and its webhooks")
	if err := env.startCAPI(ctx, opts.CAPILog); err != nil {
		_ = env.Down()
		return nil, err
	}
	fmt.Fprintln(opts.Log, "Starting the CAPTF manager and its webhooks")
	if err := env.startManager(ctx); err != nil {
		_ = env.Down()
		return nil, err
	}
	return env, nil
}

func (e *Env) writeKubeconfig() error {
	data, err := e.cp.AdminKubeconfig()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(e.Kubeconfig), 0o700); err != nil {
		return err
	}
	return os.WriteFile(e.Kubeconfig, data, 0o600)
}

// Down stops the manager and every process Up started.
func (e *Env) Down() error {
	if e.stopManager != nil {
		e.stopManager()
	}
	if e.stopCAPI != nil {
		e.stopCAPI()
	}
	return e.cp.Stop()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
