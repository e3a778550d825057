package devenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/atomicfile"
	"captf.io/captf/internal/setup"
)

// ManagerProgram is the name `captf-dev manager` reports in its usage.
const ManagerProgram = "captf-dev manager"

// ManagerCommand is `captf-dev manager`: the CAPTF manager of an
// environment started with `captf-dev up --without-manager`, run in the
// foreground of a process of its own so that it can be killed and started
// again, or run twice, as replicas of a Deployment are.
type ManagerCommand struct {
	cl       *setup.CommandLine
	stateDir string
}

// ParseManagerCommand reads the manager's own command line (internal/setup:
// the same flags as cmd/manager). The flags the environment sets for its
// in-process manager default to the same values here: --kubeconfig to
// the admin kubeconfig `up` writes in stateDir (which is only used to
// read the environment and to impersonate the manager's ServiceAccount),
// --runner-image to the local node's runner, --diagnostics-address to 0,
// --health-addr to a free local port, and --webhook-port to a free port:
// this manager's own webhook server, which the environment's webhook
// address forwards to (see Run). --webhook-cert-dir defaults to the
// environment's certificate.
func ParseManagerCommand(args []string, stateDir string) (*ManagerCommand, error) {
	kubeconfig := filepath.Join(stateDir, "kubeconfig")
	health, err := freeAddr()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cl := setup.NewCommandLine(ManagerProgram)
	fs := cl.FlagSet()
	for _, f := range []struct{ name, value, shown, usage string }{
		{"kubeconfig", kubeconfig, kubeconfig, "Admin kubeconfig of the environment, as captf-dev up --kubeconfig wrote it: the manager reads the environment with it and impersonates its ServiceAccount."},
		{"runner-image", RunnerImage, RunnerImage, ""},
		{"diagnostics-address", "0", "0", ""},
		{"health-addr", health, "a free local port", ""},
		{"webhook-port", strconv.Itoa(port), "a free port", "Port of this manager's own webhook server; the environment's webhook address, which every captf-dev manager shares, forwards to it."},
		// Empty stands for the environment's certificate, read in Run.
		{"webhook-cert-dir", "", "the environment's certificate", ""},
	} {
		if err := fs.Set(f.name, f.value); err != nil {
			return nil, err
		}
		flag := fs.Lookup(f.name)
		flag.DefValue = f.shown // what --help shows
		if f.usage != "" {
			flag.Usage = f.usage
		}
	}
	if len(args) > 0 && args[0] == "version" {
		args = append([]string{"--version"}, args[1:]...)
	}
	if err := cl.Parse(args); err != nil {
		return nil, err
	}
	return &ManagerCommand{cl: cl, stateDir: stateDir}, nil
}

// Run runs the manager until ctx ends, logging to stderr. It reads from the
// environment the address its webhook configuration sends requests to and,
// unless --webhook-cert-dir is given, the serving certificate; starts the
// manager as its ServiceAccount; and once the manager is ready, shares
// that address with every other `captf-dev manager` of the environment
// and forwards what it receives there to its own webhook server, then
// prints the line "ready" on stdout.
func (c *ManagerCommand) Run(ctx context.Context, stdout io.Writer) error {
	if c.cl.Help {
		c.cl.Usage(stdout, ManagerProgram)
		return nil
	}
	if print, raw := c.cl.Options.Version.Print(); print {
		b := c.cl.Options.Build()
		if raw {
			_, err := fmt.Fprintln(stdout, b.Raw())
			return err
		}
		_, err := fmt.Fprintln(stdout, b)
		return err
	}
	if err := c.cl.Logging.Apply(); err != nil {
		return err
	}
	setup.LogFlags(c.cl.FlagSet())
	log := ctrl.Log.WithName("captf-dev")
	o := c.cl.Options
	if _, err := os.Stat(o.Kubeconfig); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no environment: %s does not exist; start one with `captf-dev up --without-manager` or give its --kubeconfig", o.Kubeconfig)
	}
	admin, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the environment's kubeconfig: %w", err)
	}
	cl, err := client.New(admin, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return err
	}
	addr, err := webhookAddress(ctx, cl)
	if err != nil {
		return err
	}
	if o.WebhookCertDir == "" {
		if o.WebhookCertDir, err = writeWebhookCert(ctx, cl, c.stateDir); err != nil {
			return err
		}
	}
	if err := setManagerEnv(); err != nil {
		return err
	}
	// The admin impersonates the ServiceAccount: the API server, its RBAC
	// and the manager's own webhooks see the manager's user, as in-process.
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: managerUser}
	// The images of the local image store are labelled there.
	store, err := DefaultImageStore()
	if err != nil {
		return err
	}
	o.ImageLabels = imageLabels(store, nil)
	log.Info("Starting the manager", "kubeconfig", o.Kubeconfig, "user", managerUser, "webhookPort", o.WebhookPort, "leaderElect", o.LeaderElect)
	m, err := startReady(ctx, cfg, o)
	if err != nil {
		return err
	}
	defer m.stop()
	ln, err := listenShared(addr)
	if err != nil {
		return fmt.Errorf("serving the environment's webhook address %s (is a manager running inside `captf-dev up`? start it with --without-manager): %w", addr, err)
	}
	defer func() { _ = ln.Close() }() // before the manager stops: no request reaches a stopping server
	go forward(ln, net.JoinHostPort("127.0.0.1", strconv.Itoa(o.WebhookPort)), log)
	log.Info("Serving the environment's webhooks", "address", addr, "forwardedTo", o.WebhookPort)
	if _, err := fmt.Fprintln(stdout, "ready"); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return nil
	case <-m.done:
		if m.err == nil {
			return errors.New("the manager stopped")
		}
		return m.err
	}
}

// webhookAddress is host:port of the URLs of the environment's CAPTF
// webhook configuration.
func webhookAddress(ctx context.Context, c client.Client) (string, error) {
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := c.Get(ctx, types.NamespacedName{Name: webhookConfiguration}, &vwc); err != nil {
		return "", fmt.Errorf("reading the webhook configuration %s (is this an environment of `captf-dev up`?): %w", webhookConfiguration, err)
	}
	addr := ""
	for _, w := range vwc.Webhooks {
		if w.ClientConfig.URL == nil {
			return "", fmt.Errorf("webhook %s of %s has no URL: not an environment of `captf-dev up`", w.Name, webhookConfiguration)
		}
		u, err := url.Parse(*w.ClientConfig.URL)
		if err != nil {
			return "", fmt.Errorf("webhook %s of %s: %w", w.Name, webhookConfiguration, err)
		}
		if addr != "" && u.Host != addr {
			return "", fmt.Errorf("the webhooks of %s go to both %s and %s", webhookConfiguration, addr, u.Host)
		}
		addr = u.Host
	}
	if addr == "" {
		return "", fmt.Errorf("the webhook configuration %s has no webhook", webhookConfiguration)
	}
	return addr, nil
}

// writeWebhookCert writes the environment's serving certificate and key
// as a Deployment mounts the Secret, into a directory of stateDir named
// after the certificate: every manager of one environment, and each one
// started again, uses the same files (so a killed one leaves nothing new
// behind), and managers of another environment other ones. The next `up`
// removes them all.
func writeWebhookCert(ctx context.Context, c client.Client, stateDir string) (string, error) {
	var s corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: managerNamespace, Name: webhookCertSecret}, &s); err != nil {
		return "", fmt.Errorf("reading the webhook certificate: %w", err)
	}
	sum := sha256.Sum256(s.Data[corev1.TLSCertKey])
	dir := filepath.Join(managerCertsDir(stateDir), hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for _, key := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		// One rename: the certificate watcher of a manager already
		// running never reads half a file.
		if err := atomicfile.Write(filepath.Join(dir, key), s.Data[key], 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// managerCertsDir holds the certificates of `captf-dev manager`.
func managerCertsDir(stateDir string) string { return filepath.Join(stateDir, "manager-certs") }
