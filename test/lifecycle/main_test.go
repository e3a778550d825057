// Package lifecycle_test runs the CAPTF manager (internal/setup, as
// cmd/manager does) against the real API server, kube-controller-manager
// (Job controller, garbage collector) and the admission webhooks, with a
// stand-in kubelet that runs each Job's pod for real: the runner, OpenTofu
// or Terraform, the providers from the mirror and the kubernetes backend.
// The tests create Cluster API objects as Cluster API would and check
// what a user sees: contract fields, conditions, events, Jobs and Secrets.
package lifecycle_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"captf.io/captf/internal/setup"
	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	if os.Getenv("CAPTF_TEST_LOGS") != "" {
		log.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		log.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	}
	os.Exit(envtest.Main(m, &env, envtest.Options{ControllerManager: true, Webhooks: true, ClusterAPICRDs: true}, func() {
		if stopManager != nil {
			stopManager()
		}
	}))
}

// imagePullGrace is the manager's image pull grace in this suite.
const imagePullGrace = 15 * time.Second

// holderWait stands for both parts of the wait for a gone holder.
const holderWait = time.Millisecond

// retryBase is the manager's first backoff after a failure in this suite
// (1 min in production; the table tests of internal/decide keep that).
const retryBase = 15 * time.Second

// The manager's identity, as the Deployment's downward API gives it.
const (
	managerNamespace = "captf-system"
	managerAccount   = "captf-controller-manager"
)

var (
	managerOnce sync.Once
	managerErr  error
	stopManager func()
)

// startManager runs the manager once for the package (controller names
// are process-wide), as its own ServiceAccount.
func startManager(t *testing.T) {
	t.Helper()
	envtest.Require(t, env)
	managerOnce.Do(func() { managerErr = runManager() })
	if managerErr != nil {
		t.Fatal(managerErr)
	}
}

func runManager() error {
	for k, v := range map[string]string{"POD_NAMESPACE": managerNamespace, "SERVICE_ACCOUNT_NAME": managerAccount} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	// The manager runs with exactly the ClusterRole config/ ships, so that
	// a permission it lacks fails here.
	user := "system:serviceaccount:" + managerNamespace + ":" + managerAccount
	if err := bindShippedRole(user); err != nil {
		return err
	}
	cfg, err := env.ControlPlane.AddUser(user)
	if err != nil {
		return err
	}
	// The suite's tests run side by side: some thirty clusters' worth of
	// passes at once, more than the manager's default client-side rate
	// limits (setup.DefaultQPS) serve without stalling a test's wait.
	cfg.QPS, cfg.Burst = 4*setup.DefaultQPS, 4*setup.DefaultBurst
	_, port, certDir := env.ControlPlane.WebhookServer()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	health := l.Addr().String()
	_ = l.Close()
	o := setup.Defaults()
	o.HealthAddr, o.DiagnosticsAddress, o.WebhookPort, o.WebhookCertDir = health, "0", port, certDir
	o.RunnerImage = "local/captf-manager:test"
	o.RunnerEvents = false
	// A panic in a pass fails the suite at once, where controller-runtime
	// would recover it, log it and try again.
	o.CrashOnPanic = true
	built, err := setup.BuildManager(cfg, o)
	if err != nil {
		return err
	}
	// Image pulls are given up on sooner than in production (2 min), so
	// that the image tests take seconds.
	built.Engine.Options.ImagePullGrace = imagePullGrace
	// A lease or lock holder whose pod is gone is waited out for its pod's
	// grace plus the lease duration (over 80 min by default). The stand-in
	// kubelet runs no pod after its deletion, so the tests that delete Jobs
	// and pods, or plant a lock of a pod that never existed, wait
	// milliseconds; the waits themselves are table-tested in the package.
	built.Engine.Options.Timing.RetryBase = retryBase
	// A step that runs without saying a condition it owns fails the
	// suite (o.CrashOnPanic), where production logs it.
	built.Engine.Options.StrictConditions = true
	built.Engine.Options.HolderGrace = holderWait
	built.Engine.Options.HolderLeaseDuration = holderWait
	mgr := built.Manager
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopManager = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintln(os.Stderr, "the manager stopped with", err)
			}
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "the manager did not stop in 30s")
		}
	}
	return nil
}

// bindShippedRole creates the manager's namespace (where it keeps its
// checkpoint) and config/rbac's manager and runner ClusterRoles, and binds
// the manager's to user.
func bindShippedRole(user string) error {
	root, err := envtest.RepoRoot()
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace}}); err != nil {
		return err
	}
	for _, file := range []string{"role.yaml", "runner_role.yaml"} {
		raw, err := os.ReadFile(filepath.Join(root, "config", "rbac", file))
		if err != nil {
			return err
		}
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal(raw, role); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := env.Client.Create(ctx, role); err != nil {
			return err
		}
	}
	return env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "captf-manager-test"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "captf-manager-role"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})
}
