// Package manager_test starts the CAPTF manager exactly as cmd/manager does
// (internal/setup), against the real API server with config/webhook
// installed, and checks what a user sees through kubectl: admission served
// by the manager, controllers running, readiness.
package manager_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/setup"
	"captf.io/captf/internal/test/envtest"
)

var (
	env        *envtest.Env
	healthAddr string
	// diagnosticsAddr serves /metrics as shipped: HTTPS, authenticated
	// and authorized.
	diagnosticsAddr string
)

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{Webhooks: true, ClusterAPICRDs: true}, func() {
		if stopManager != nil {
			stopManager()
		}
	}))
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

var (
	managerOnce sync.Once
	managerErr  error
	stopManager func()
)

// startManager runs the manager, once for the whole package (controller
// names are process-wide), until the tests end.
func startManager(t *testing.T) {
	t.Helper()
	envtest.Require(t, env)
	managerOnce.Do(func() { managerErr = runManager() })
	if managerErr != nil {
		t.Fatal(managerErr)
	}
}

// managerCache is the running manager's informer cache.
var managerCache client.Reader

// The manager's identity, as the Deployment's downward API gives it.
const (
	managerNamespace = "captf-system"
	managerAccount   = "captf-controller-manager"
)

func runManager() error {
	for k, v := range map[string]string{"POD_NAMESPACE": managerNamespace, "SERVICE_ACCOUNT_NAME": managerAccount} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	// The manager keeps its checkpoint in its namespace.
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace}}); err != nil {
		return err
	}
	_, port, certDir := env.ControlPlane.WebhookServer()
	healthAddr = fmt.Sprintf("127.0.0.1:%d", freePort())
	diagnosticsAddr = fmt.Sprintf("127.0.0.1:%d", freePort())
	o := setup.Defaults()
	o.HealthAddr, o.DiagnosticsAddress, o.WebhookPort, o.WebhookCertDir = healthAddr, diagnosticsAddr, port, certDir
	o.RunnerImage = "local/captf-manager:test"
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(managerRequests.wrap)
	built, err := setup.BuildManager(cfg, o)
	if err != nil {
		return err
	}
	mgr := built.Manager
	managerCache = mgr.GetCache()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopManager = func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "the manager stopped with", err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("the manager stopped: %w", err)
		default:
		}
		resp, err := http.Get("http://" + healthAddr + "/readyz")
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("the manager never became ready (its webhook server did not start): %w", err)
	}
	return nil
}

func TestManagerServesAdmissionAndRunsControllers(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: "default"}, StringData: map[string]string{"TOKEN": "x"}}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}

	// A user who may not read the Secret cannot point an identity at it:
	// the manager's webhook asks the API server on the user's behalf.
	cfg, err := env.ControlPlane.AddUser("mallory", "identity-admins")
	if err != nil {
		t.Fatal(err)
	}
	grantIdentityWrite(t, "identity-admins")
	mallory, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	id := &infrav1.TerraformClusterIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: "cloud"},
		Spec:       infrav1.TerraformClusterIdentitySpec{SecretRef: infrav1.SecretReference{Name: "cloud", Namespace: "default"}},
	}
	err = mallory.Create(ctx, id.DeepCopy())
	if err == nil || !strings.Contains(err.Error(), `user "mallory" may not get Secret default/cloud`) {
		t.Fatalf("want the identity refused for mallory, got %v", err)
	}

	// An admin may; the identity controller then reports the Secret found.
	if err := env.Client.Create(ctx, id); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &infrav1.TerraformClusterIdentity{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(id), got); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(got.Status.Conditions, infrav1.ReadyCondition), nil
	})
	if err != nil {
		t.Fatalf("the identity never became Ready: %v", err)
	}

	// Names the runner owns are refused in spec.jobs.env.
	m := &infrav1.TerraformMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "default"},
		Spec: infrav1.TerraformMachineSpec{
			Source: infrav1.SourceSpec{Image: "local/noop-machine:tofu"},
			Jobs:   &infrav1.JobsSpec{Env: []corev1.EnvVar{{Name: "GOOD", Value: "1"}, {Name: "TF_LOG", Value: "DEBUG"}}},
		},
	}
	err = env.Client.Create(ctx, m)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.jobs.env[1].name") {
		t.Fatalf("want spec.jobs.env[1].name rejected, got %v", err)
	}

	// Variable names that collide with what CAPTF renders are refused, all
	// at once, without echoing a value.
	c := &infrav1.TerraformCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"},
		Spec: infrav1.TerraformClusterSpec{
			Source:      infrav1.SourceSpec{Image: "local/noop-cluster:tofu"},
			IdentityRef: &infrav1.IdentityReference{Name: "cloud"},
			Variables:   &apiextensionsv1.JSON{Raw: []byte(`{"region":"eu","captf_x":"v4lue-1","cluster_network":"v4lue-2","count":3}`)},
		},
	}
	err = env.Client.Create(ctx, c)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want the variables refused, got %v", err)
	}
	for _, want := range []string{"spec.variables[captf_x]", "spec.variables[cluster_network]", "spec.variables[count]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %s: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "v4lue") {
		t.Errorf("the refusal shows a value: %v", err)
	}
}
