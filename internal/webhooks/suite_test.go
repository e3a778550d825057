package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/controlplane"
	"captf.io/captf/internal/reconcilers/identity"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/webhooks"
)

// The suite serves the webhooks for real: kube-apiserver calls the
// manager's webhook server, which also runs the identity controller, so the
// final scan covers everything the manager wrote.
var (
	testEnv    *crenvtest.Environment
	admin      client.Client
	mgr        manager.Manager
	skipReason string
)

// credValue is the credential of every source Secret in the suite.
const credValue = "cred-value-7f3a9c-do-not-leak"

var (
	mu       sync.Mutex
	captured []string
)

// capture keeps text the scan must find clean: log lines and the errors
// the API server returned to the tests.
func capture(s string) {
	mu.Lock()
	defer mu.Unlock()
	captured = append(captured, s)
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tools := os.Getenv(envtest.ToolsEnv)
	err := controlplane.CheckTools(tools, "etcd", "kube-apiserver")
	if err != nil && os.Getenv("CI") == "true" {
		fmt.Fprintln(os.Stderr, "envtest: FAIL:", err)
		return 1
	}
	if err != nil {
		skipReason = err.Error()
		return m.Run()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := start(ctx, tools); err != nil {
		fmt.Fprintln(os.Stderr, "envtest: FAIL:", err)
		if testEnv != nil {
			_ = testEnv.Stop()
		}
		return 1
	}
	code := m.Run()
	if code == 0 && flowsRan.Load() {
		if err := scanForCredentials(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	cancel()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "envtest: stopping the control plane:", err)
	}
	return code
}

func start(ctx context.Context, tools string) error {
	root, err := envtest.RepoRoot()
	if err != nil {
		return err
	}
	scheme, err := envtest.NewScheme()
	if err != nil {
		return err
	}
	if err := os.Unsetenv("KUBEBUILDER_ASSETS"); err != nil {
		return err
	}
	testEnv = &crenvtest.Environment{
		BinaryAssetsDirectory:    filepath.Join(tools, "bin"),
		CRDDirectoryPaths:        []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing:    true,
		Scheme:                   scheme,
		ControlPlaneStartTimeout: time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		WebhookInstallOptions:    crenvtest.WebhookInstallOptions{ValidatingWebhooks: webhookConfigurations()},
	}
	cfg, err := testEnv.Start()
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	ctrl.SetLogger(funcr.New(func(prefix, args string) { capture(prefix + " " + args) }, funcr.Options{Verbosity: 10}))
	wh := testEnv.WebhookInstallOptions
	mgr, err = ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir}),
	})
	if err != nil {
		return err
	}
	if err := webhooks.SetupWebhooks(mgr, nil); err != nil {
		return err
	}
	if err := (&identity.Reconciler{}).SetupWithManager(mgr); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	if admin, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	started := mgr.GetWebhookServer().StartedChecker()
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return started(&http.Request{}) == nil, nil
	})
}

func require(t *testing.T) {
	t.Helper()
	if testEnv == nil {
		t.Skipf("SKIP (not in CI): %s", skipReason)
	}
	flowsRan.Store(true)
}

// flowsRan is set once a test used the API server: only then can the
// credentials scan prove anything (a benchmark-only run runs no flow).
var flowsRan atomic.Bool

// webhookConfigurations is what config/webhook will declare: envtest
// points each entry at the local webhook server.
func webhookConfigurations() []*admissionv1.ValidatingWebhookConfiguration {
	hook := func(name, path, resource string, policy admissionv1.FailurePolicyType, ops ...admissionv1.OperationType) admissionv1.ValidatingWebhook {
		p := strings.TrimPrefix(path, "/") // envtest joins host and path with a slash
		none := admissionv1.SideEffectClassNone
		return admissionv1.ValidatingWebhook{
			Name:         name,
			ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "captf-system", Name: "captf-webhook-service", Path: &p}},
			Rules: []admissionv1.RuleWithOperations{{Operations: ops, Rule: admissionv1.Rule{
				APIGroups: []string{infrav1.GroupVersion.Group}, APIVersions: []string{infrav1.GroupVersion.Version}, Resources: []string{resource},
			}}},
			FailurePolicy:           &policy,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		}
	}
	cu := []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}
	return []*admissionv1.ValidatingWebhookConfiguration{{
		ObjectMeta: metav1ObjectMeta("captf-validating-webhook-configuration"),
		Webhooks: []admissionv1.ValidatingWebhook{
			hook("vterraformclusteridentity.infrastructure.cluster.x-k8s.io", webhooks.IdentityPath, "terraformclusteridentities", admissionv1.Fail, cu...),
			hook("vterraformclusteridentity-delete.infrastructure.cluster.x-k8s.io", webhooks.IdentityDeletePath, "terraformclusteridentities", admissionv1.Ignore, admissionv1.Delete),
			hook("vterraformcluster.infrastructure.cluster.x-k8s.io", webhooks.ClusterPath, "terraformclusters", admissionv1.Fail, cu...),
			hook("vterraformmachine.infrastructure.cluster.x-k8s.io", webhooks.MachinePath, "terraformmachines", admissionv1.Fail, cu...),
			hook("vterraformmachinepool.infrastructure.cluster.x-k8s.io", webhooks.MachinePoolPath, "terraformmachinepools", admissionv1.Fail, cu...),
		},
	}}
}

// userClient returns a client authenticating as name in groups; real RBAC
// applies to it.
func userClient(t *testing.T, name string, groups ...string) client.Client {
	t.Helper()
	u, err := testEnv.AddUser(crenvtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(rest.CopyConfig(u.Config()), client.Options{Scheme: admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// scanForCredentials fails when the credential value appears in any
// identity or workload object (spec and status), any Event, any log line of
// the manager, or any error the tests received.
func scanForCredentials(ctx context.Context) error {
	lists := []client.ObjectList{
		&infrav1.TerraformClusterIdentityList{}, &infrav1.TerraformClusterList{}, &infrav1.TerraformMachineList{},
		&infrav1.TerraformMachinePoolList{}, &corev1.EventList{}, &eventsv1.EventList{},
	}
	var texts []string
	events := 0
	for _, l := range lists {
		if err := admin.List(ctx, l); err != nil {
			return fmt.Errorf("listing for the credentials scan: %w", err)
		}
		data, err := json.Marshal(l)
		if err != nil {
			return err
		}
		texts = append(texts, string(data))
		if el, ok := l.(*eventsv1.EventList); ok {
			events += len(el.Items)
		}
	}
	mu.Lock()
	texts = append(texts, captured...)
	nCaptured := len(captured)
	mu.Unlock()
	if events == 0 || nCaptured == 0 {
		return errors.New("the credentials scan found no events or no log lines; it would prove nothing")
	}
	for _, text := range texts {
		if strings.Contains(text, credValue) {
			return fmt.Errorf("the credential value leaked:\n%s", text)
		}
	}
	return nil
}
