package devenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"captf.io/captf/internal/setup"
	"captf.io/captf/internal/workspace"
)

// The manager's identity, as its Deployment gives it through the downward
// API: its webhooks let only this user write what only the manager writes.
const (
	managerNamespace = "captf-system"
	managerAccount   = "captf-controller-manager"
	managerUser      = "system:serviceaccount:" + managerNamespace + ":" + managerAccount
)

// Where the environment leaves what a manager started by `captf-dev
// manager` reads: the serving certificate in the Secret cert-manager
// writes in production (config/certmanager), and the address in the
// webhook configuration config/webhook ships.
const (
	webhookCertSecret    = "captf-webhook-service-cert"
	webhookConfiguration = "captf-validating-webhook-configuration"
)

// managerManifests are what config/ installs for the manager besides its
// Deployment: its namespace, ServiceAccount, ClusterRole and the leader
// election Role, each bound to the ServiceAccount.
var managerManifests = []string{
	"manager/namespace.yaml",
	"rbac/service_account.yaml",
	"rbac/role.yaml",
	"rbac/role_binding.yaml",
	"rbac/leader_election_role.yaml",
	"rbac/leader_election_role_binding.yaml",
}

// prepareManager installs what the manager needs from its cluster, in or
// out of this process: the manifests of managerManifests, as config/ ships
// them, and the webhook server's certificate and key in the Secret a
// Deployment would mount.
func (e *Env) prepareManager(ctx context.Context) error {
	var objs []*unstructured.Unstructured
	for _, m := range managerManifests {
		o, err := ReadManifests(filepath.Join(e.Repo, "config", m))
		if err != nil {
			return err
		}
		objs = append(objs, o...)
	}
	if err := Create(ctx, e.Client, objs); err != nil {
		return err
	}
	_, _, certDir := e.cp.WebhookServer()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: webhookCertSecret},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"ca.crt": e.cp.WebhookCA()},
	}
	for _, key := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		data, err := os.ReadFile(filepath.Join(certDir, key))
		if err != nil {
			return fmt.Errorf("reading the webhook certificate: %w", err)
		}
		secret.Data[key] = data
	}
	return e.Client.Create(ctx, secret)
}

// startManager runs the CAPTF manager in this process, built exactly as
// cmd/manager builds it and authenticated as its ServiceAccount, serving
// the webhooks the control plane was told about, and returns once it
// reports ready (its webhook server serves).
func (e *Env) startManager(ctx context.Context, imagePullGrace time.Duration, crashOnPanic bool) error {
	if err := setManagerEnv(); err != nil {
		return err
	}
	cfg, err := e.cp.AddUser(managerUser)
	if err != nil {
		return err
	}
	_, port, certDir := e.cp.WebhookServer()
	health, err := freeAddr()
	if err != nil {
		return err
	}
	o := setup.Defaults()
	o.HealthAddr, o.DiagnosticsAddress, o.WebhookPort, o.WebhookCertDir = health, "0", port, certDir
	o.RunnerImage = RunnerImage
	o.ImageLabels = e.labels
	o.CrashOnPanic = crashOnPanic
	m, err := startReady(ctx, cfg, o, func(e *workspace.Options) {
		// A manager the tests crash on a panic also fails them on a step
		// that runs without saying its conditions.
		e.ImagePullGrace, e.StrictConditions = imagePullGrace, crashOnPanic
	})
	if err != nil {
		return err
	}
	e.stopManager = m.stop
	return nil
}

// setManagerEnv gives this process the downward-API variables the manager
// reads its identity from.
func setManagerEnv() error {
	for k, v := range map[string]string{"POD_NAMESPACE": managerNamespace, "SERVICE_ACCOUNT_NAME": managerAccount} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// runningManager is a manager started by startReady.
type runningManager struct {
	cancel func()
	done   chan struct{}
	err    error // read only after done is closed
}

// stop stops the manager and waits until it has.
func (m *runningManager) stop() {
	m.cancel()
	<-m.done
}

// startReady builds the manager of o as cmd/manager does (tune, when
// given, changes the engine's options no flag sets), starts it and
// returns once its /readyz (the webhook server serves) says ready. The
// manager outlives ctx's cancellation: it runs until stopped.
func startReady(ctx context.Context, cfg *rest.Config, o setup.Options, tune ...func(*workspace.Options)) (*runningManager, error) {
	built, err := setup.BuildManager(cfg, o)
	if err != nil {
		return nil, err
	}
	for _, f := range tune {
		f(&built.Engine.Options)
	}
	mgr := built.Manager
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m := &runningManager{cancel: cancel, done: make(chan struct{})}
	go func() {
		m.err = mgr.Start(mctx)
		close(m.done)
	}()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case <-m.done:
			return false, fmt.Errorf("the manager stopped: %w", m.err)
		default:
		}
		resp, err := http.Get("http://" + o.HealthAddr + "/readyz")
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		m.stop()
		return nil, fmt.Errorf("waiting for the manager to be ready: %w", err)
	}
	return m, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// RunnerImage is the runner image the local environment's Jobs name: the
// manager image built from the checkout (Env.managerImage), or the runner
// of an in-process node.
const RunnerImage = "local/captf-manager:dev"
