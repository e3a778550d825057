package scale_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/reconcilers/identity"
	"captf.io/captf/internal/reconcilers/workload"
	"captf.io/captf/internal/setup"
	"captf.io/captf/internal/webhooks"
	"captf.io/captf/internal/workspace"
)

// manager is one running CAPTF manager and the lifecycle engine inside it.
type manager struct {
	engine *workspace.Engine
	stop   func() error
}

// startManager runs a manager that watches namespace only (--namespace),
// as its own ServiceAccount with the shipped ClusterRole, and returns once
// its webhook server answers.
//
// It is setup.NewManager with the flag defaults, duplicated because
// NewManager does not hand out its *workspace.Engine, whose Decodes()
// the benchmark reads. What differs changes nothing the manager caches or
// reads: the health and metrics listeners are off; controller names may
// repeat (each phase of the benchmark starts a fresh manager in the same
// process); client-side rate limiting is off, as ctrl.GetConfig leaves it
// for the in-cluster manager (the test user's config would otherwise get
// client-go's 5 QPS); and the manager's connections are its own, closed
// when it stops.
func startManager(ctx context.Context, namespace string) (*manager, error) {
	for k, v := range map[string]string{"POD_NAMESPACE": managerNamespace, "SERVICE_ACCOUNT_NAME": managerAccount} {
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	cfg, err := env.ControlPlane.AddUser(managerUser)
	if err != nil {
		return nil, err
	}
	cfg.QPS = -1
	// A transport of the manager's own (client-go shares those of equal
	// configs, but not of configs with a proxy function), so that stop
	// can close its connections: left to their idle timeout, they would
	// be freed in the middle of the next phase's measurement.
	cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	_, port, certDir := env.ControlPlane.WebhookServer()
	o := setup.Defaults()
	o.RunnerImage, o.RunnerEvents, o.Namespace = "local/captf-manager:test", false, namespace
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s, err := setup.Scheme()
	if err != nil {
		return nil, err
	}
	managed := labels.SelectorFromSet(labels.Set{infrav1.ManagedLabel: "true"})
	cacheOpts := cache.Options{SyncPeriod: &o.SyncPeriod, ByObject: map[client.Object]cache.ByObject{&batchv1.Job{}: {Label: managed}},
		DefaultNamespaces: map[string]cache.Config{namespace: {}}}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 s,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		WebhookServer:          webhook.NewServer(webhook.Options{Port: port, CertDir: certDir}),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := (&identity.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	engine := &workspace.Engine{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("captf-manager"),
		Options: workspace.Options{RunnerImage: o.RunnerImage, DriftDefault: o.DriftDefaultInterval, RunnerEvents: o.RunnerEvents,
			MaxActiveJobs: o.MaxActiveJobs, ClusterMaxActiveJobs: o.ClusterMaxActiveJobs, StateBackups: o.StateBackups},
	}
	if err := workload.Setup(mgr, engine, workload.Concurrency{Cluster: o.ClusterConcurrency, Machine: o.MachineConcurrency, MachinePool: o.MachinePoolConcurrency}); err != nil {
		return nil, err
	}
	if err := webhooks.SetupWebhooks(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	m := &manager{engine: engine, stop: func() error {
		cancel()
		select {
		case err := <-done:
			utilnet.CloseIdleConnectionsFor(mgr.GetHTTPClient().Transport)
			return err
		case <-time.After(time.Minute):
			return fmt.Errorf("the manager did not stop in a minute")
		}
	}}
	started := mgr.GetWebhookServer().StartedChecker()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			done <- err // for stop
			return false, fmt.Errorf("the manager stopped: %w", err)
		default:
		}
		return started(&http.Request{}) == nil, nil
	})
	if err != nil {
		_ = m.stop()
		return nil, fmt.Errorf("waiting for the webhook server: %w", err)
	}
	return m, nil
}
