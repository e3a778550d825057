// Package controlplane starts a real Kubernetes control plane from the
// binaries hack/tools builds: etcd and kube-apiserver, CAPTF's CRDs (and
// optionally others) installed, and on request kube-controller-manager with
// the Job, garbage collector, namespace and TTL-after-finished controllers
// (a namespace deletion and a Job's expiry behave as in a cluster).
//
// The integration tests (through internal/test/envtest) and the local
// environment (cmd/captf-dev) both start the control plane here, so they
// run against the same thing. The manager never imports it.
package controlplane

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AuditDirEnv names the environment variable that, when set to an
// absolute directory, makes every control plane started here write the API
// server's audit log there (metadata level: who asked what of which
// object, no bodies), one audit-*.log per API server. It is a
// measuring switch for the request figures of docs/development.md.
const AuditDirEnv = "CAPTF_AUDIT_DIR"

// ErrToolsMissing is returned when the tool cache lacks a binary.
var ErrToolsMissing = errors.New("the control plane binaries are missing")

// Options says what to start.
type Options struct {
	// Tools is the tool cache directory (`make -s tools-dir`).
	Tools string
	// CRDDirs are installed before anything else starts.
	CRDDirs []string
	// Scheme is used to install CRDs and for the returned config's users.
	Scheme *runtime.Scheme
	// ControllerManager also starts kube-controller-manager with the Job
	// controller and the garbage collector.
	ControllerManager bool
	// Log receives the controller manager's output; nil discards it.
	Log *os.File
	// WebhookDirs hold webhook configurations to install, pointed at a
	// local webhook server (see WebhookServer).
	WebhookDirs []string
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	// Config reaches the API server as a member of system:masters.
	Config *rest.Config

	env *crenvtest.Environment
	kcm *exec.Cmd
	dir string
}

// CheckTools returns an error naming the first missing binary.
func CheckTools(tools string, binaries ...string) error {
	if tools == "" {
		return fmt.Errorf("%w: no tool cache directory given; run `make tools` and pass `make -s tools-dir`", ErrToolsMissing)
	}
	for _, b := range binaries {
		p := filepath.Join(tools, "bin", b)
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return fmt.Errorf("%w: %s is missing; run `make tools` (or `make test`) to build it", ErrToolsMissing, p)
		}
	}
	return nil
}

// Start starts the control plane. CRDs are installed before the controller
// manager starts, since its garbage collector rediscovers types only every
// 30 seconds.
func Start(opts Options) (*ControlPlane, error) {
	bins := []string{"etcd", "kube-apiserver"}
	if opts.ControllerManager {
		bins = append(bins, "kube-controller-manager")
	}
	if err := CheckTools(opts.Tools, bins...); err != nil {
		return nil, err
	}
	// KUBEBUILDER_ASSETS would override BinaryAssetsDirectory: the tool
	// cache is the only source of binaries.
	if err := os.Unsetenv("KUBEBUILDER_ASSETS"); err != nil {
		return nil, err
	}
	env := &crenvtest.Environment{
		WebhookInstallOptions:    crenvtest.WebhookInstallOptions{Paths: opts.WebhookDirs},
		BinaryAssetsDirectory:    filepath.Join(opts.Tools, "bin"),
		CRDDirectoryPaths:        opts.CRDDirs,
		ErrorIfCRDPathMissing:    true,
		Scheme:                   opts.Scheme,
		ControlPlaneStartTimeout: time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	if dir := os.Getenv(AuditDirEnv); dir != "" {
		if err := audit(env, dir); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", AuditDirEnv, dir, err)
		}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver from %s: %w", opts.Tools, err)
	}
	cp := &ControlPlane{Config: cfg, env: env}
	if opts.ControllerManager {
		if err := cp.startControllerManager(opts); err != nil {
			_ = cp.Stop()
			return nil, err
		}
	}
	return cp, nil
}

// auditPolicy records every request at metadata level.
const auditPolicy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"

// audit points env's API server at a policy and a log of its own in dir.
func audit(env *crenvtest.Environment, dir string) error {
	// A test's working directory is its package's: a relative dir would
	// scatter logs over the checkout.
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("want an absolute directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	log, err := os.CreateTemp(dir, "audit-*.log")
	if err != nil {
		return err
	}
	if err := log.Close(); err != nil {
		return err
	}
	policy := strings.TrimSuffix(log.Name(), ".log") + "-policy.yaml"
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	env.ControlPlane.GetAPIServer().Configure().Set("audit-policy-file", policy).Set("audit-log-path", log.Name())
	return nil
}

// WebhookServer is where the installed webhook configurations send their
// requests: a webhook server must listen on host:port with the certificate
// and key in certDir (tls.crt, tls.key).
func (cp *ControlPlane) WebhookServer() (host string, port int, certDir string) {
	w := cp.env.WebhookInstallOptions
	return w.LocalServingHost, w.LocalServingPort, w.LocalServingCertDir
}

// WebhookCA is the CA that signed the webhook server's certificate; a
// webhook configuration pointing at another local server using the same
// certificate trusts it.
func (cp *ControlPlane) WebhookCA() []byte {
	return cp.env.WebhookInstallOptions.LocalServingCAData
}

// AdminKubeconfig returns a kubeconfig of a system:masters user.
func (cp *ControlPlane) AdminKubeconfig() ([]byte, error) {
	user, err := cp.env.AddUser(crenvtest.User{Name: "captf-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	return user.KubeConfig()
}

// AddUser returns a REST config authenticating as the named user and groups
// (real RBAC applies to it).
func (cp *ControlPlane) AddUser(name string, groups ...string) (*rest.Config, error) {
	user, err := cp.env.AddUser(crenvtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, err
	}
	return user.Config(), nil
}

func (cp *ControlPlane) startControllerManager(opts Options) error {
	kubeconfig, err := cp.AdminKubeconfig()
	if err != nil {
		return err
	}
	cp.dir, err = os.MkdirTemp("", "captf-kcm-")
	if err != nil {
		return err
	}
	path := filepath.Join(cp.dir, "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(opts.Tools, "bin", "kube-controller-manager"),
		"--kubeconfig="+path,
		"--controllers=job-controller,garbage-collector-controller,namespace-controller,ttl-after-finished-controller",
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--secure-port=0",
	)
	if opts.Log != nil {
		cmd.Stdout, cmd.Stderr = opts.Log, opts.Log
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting kube-controller-manager: %w", err)
	}
	cp.kcm = cmd
	return nil
}

// Stop stops every process it started and removes its files.
func (cp *ControlPlane) Stop() error {
	var errs []string
	if cp.kcm != nil && cp.kcm.Process != nil {
		_ = cp.kcm.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() {
			_ = cp.kcm.Wait() // a signalled process always reports an error
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cp.kcm.Process.Kill()
			<-done
		}
	}
	if cp.dir != "" {
		_ = os.RemoveAll(cp.dir)
	}
	if cp.env != nil {
		if err := cp.env.Stop(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
