// Package devenv is CAPTF's embedded local environment: a real control plane
// started from the tool cache on this machine (etcd, kube-apiserver,
// kube-controller-manager) with CAPTF's and Cluster API's CRDs, the real
// Cluster API core manager, the CAPTF manager (in this process, or in one
// of its own: ManagerCommand) and a local node (internal/localnode) that
// runs the Jobs' pods, for the demo and the end-to-end tests. It is never
// imported by the manager.
package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/controlplane"
	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/pkg/contract"
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

	// StateDir holds the environment's files: the manager image the local
	// node runs, the node's pod files and the pod logs.
	StateDir string
	// Node is the local node running the environment's pods.
	Node *localnode.Node

	// DemoImages are module images the demo runs instead of the example
	// modules', by role (`captf-dev demo --machine-module` and the like).
	DemoImages map[contract.Role]string

	cp *controlplane.ControlPlane
	// labels serves the local images' labels to the manager.
	labels imagemeta.Reader

	stopManager func()
	stopCAPI    []func()
}

// Options configure Up.
type Options struct {
	// Tools is the tool cache directory.
	Tools string
	// Repo is the CAPTF checkout.
	Repo string
	// Kubeconfig is where to write the admin kubeconfig.
	Kubeconfig string
	// StateDir is where the environment keeps its files (see Env).
	StateDir string
	// Log receives progress lines.
	Log io.Writer
	// ControllerLog receives kube-controller-manager's output.
	ControllerLog *os.File
	// CAPILog receives the Cluster API manager's output.
	CAPILog *os.File
	// NodeLog receives the local node's own lines.
	NodeLog logr.Logger
	// NodeMode forces how the local node runs containers; empty picks
	// namespaces where possible (see localnode.Mode).
	NodeMode localnode.Mode
	// NodeMaxPods, when set, is how many pods the local node runs at once
	// (localnode.Options.MaxPods); the others wait, Pending.
	NodeMaxPods int
	// ExtraImages are images the local node serves besides the example
	// module images (tests add their own modules this way).
	ExtraImages map[string]localnode.Image
	// WithoutManager leaves the CAPTF manager out: everything it needs is
	// installed, and `captf-dev manager` (ManagerCommand) runs it in a
	// process of its own.
	WithoutManager bool
	// ImagePullGrace, when set, replaces the manager's image pull grace
	// (workspace.ImagePullGrace). No flag sets it; tests shorten it.
	ImagePullGrace time.Duration
	// Kubeadm also runs kubeadm's bootstrap and control plane providers,
	// with their CRDs (`captf-dev up --kubeadm`).
	Kubeadm bool
	// CrashOnPanic makes a panic in one of the manager's passes end the
	// process instead of being recovered and logged: the tests set it. A
	// step of a pass that runs without saying the conditions it owns then
	// panics too (workspace.Options.StrictConditions).
	CrashOnPanic bool
}

func scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, infrav1.AddToScheme, clusterv1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Up starts etcd, kube-apiserver and kube-controller-manager with CAPTF's
// CRDs (and Cluster API's when the tool cache has them) installed first,
// writes an admin kubeconfig, installs the runner's ClusterRole and what the
// CAPTF manager needs (see prepareManager), and starts the Cluster API
// manager, the CAPTF manager (unless WithoutManager) and the local node.
func Up(ctx context.Context, opts Options) (*Env, error) {
	if opts.StateDir == "" {
		return nil, errors.New("devenv: a state directory is required")
	}
	s, err := scheme()
	if err != nil {
		return nil, err
	}
	// The certificates of the last environment's managers are useless now.
	if err := os.RemoveAll(managerCertsDir(opts.StateDir)); err != nil {
		return nil, err
	}
	crds := []string{filepath.Join(opts.Repo, "config", "crd", "bases")}
	crds = append(crds, capiCRDDirs(opts.Tools, opts.Kubeadm)...)
	fmt.Fprintf(opts.Log, "Starting etcd, kube-apiserver and kube-controller-manager from %s\n", opts.Tools)
	cp, err := controlplane.Start(controlplane.Options{
		Tools: opts.Tools, CRDDirs: crds, Scheme: s,
		ControllerManager: true, Log: opts.ControllerLog,
		WebhookDirs: []string{filepath.Join(opts.Repo, "config", "webhook")},
	})
	if err != nil {
		return nil, err
	}
	env := &Env{Tools: opts.Tools, Repo: opts.Repo, Kubeconfig: opts.Kubeconfig, StateDir: opts.StateDir, cp: cp}
	if err := env.writeKubeconfig(); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	if env.Client, err = client.New(cp.Config, client.Options{Scheme: s}); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	// The manager binds this role to the runner's ServiceAccount in every
	// namespace it runs Jobs in, as config/ installs it.
	role, err := ReadManifests(filepath.Join(opts.Repo, "config", "rbac", "runner_role.yaml"))
	if err == nil {
		err = Create(ctx, env.Client, role)
	}
	if err != nil {
		_ = cp.Stop()
		return nil, err
	}
	if opts.Kubeadm {
		fmt.Fprintln(opts.Log, "Starting the Cluster API core, kubeadm bootstrap and kubeadm control plane managers and their webhooks")
	} else {
		fmt.Fprintln(opts.Log, "Starting the Cluster API core manager and its webhooks")
	}
	if err := env.startCAPI(ctx, opts.CAPILog, opts.Kubeadm); err != nil {
		_ = env.Down()
		return nil, err
	}
	if err := env.prepareManager(ctx); err != nil {
		_ = env.Down()
		return nil, err
	}
	store, err := DefaultImageStore()
	if err != nil {
		_ = env.Down()
		return nil, err
	}
	env.labels = imageLabels(store, opts.ExtraImages)
	if opts.WithoutManager {
		host, port, _ := cp.WebhookServer()
		fmt.Fprintf(opts.Log, "Not starting the CAPTF manager: `captf-dev manager --kubeconfig %s` runs it; the API server sends its webhooks to https://%s\n",
			opts.Kubeconfig, net.JoinHostPort(host, strconv.Itoa(port)))
	} else {
		fmt.Fprintln(opts.Log, "Starting the CAPTF manager and its webhooks")
		if err := env.startManager(ctx, opts.ImagePullGrace, opts.CrashOnPanic); err != nil {
			_ = env.Down()
			return nil, err
		}
	}
	if err := env.startNode(ctx, opts.Log, opts.NodeLog, opts.NodeMode, opts.NodeMaxPods, opts.ExtraImages); err != nil {
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

// Down stops the manager, the local node (running containers get SIGTERM)
// and every process Up started. Pod logs stay in the state directory.
func (e *Env) Down() error {
	if e.stopManager != nil {
		e.stopManager()
	}
	if e.Node != nil {
		e.Node.Stop()
	}
	for _, stop := range slices.Backward(e.stopCAPI) {
		stop()
	}
	return e.cp.Stop()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
