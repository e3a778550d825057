package scale_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"

	"captf.io/captf/internal/setup"
	"captf.io/captf/internal/workspace"
)

// manager is one running CAPTF manager and the lifecycle engine inside it.
type manager struct {
	engine  *workspace.Engine
	traffic *traffic
	// stop stops the manager; called again, it answers the same.
	stop func() error
}

// The client-side rate limits a test manager runs with.
type rateLimits bool

const (
	// unlimited turns client-side rate limiting off.
	unlimited rateLimits = false
	// shippedLimits keeps the manager's own (setup.DefaultQPS), as a
	// manager in a cluster has them.
	shippedLimits rateLimits = true
)

// startManager runs a manager that watches namespace only (--namespace;
// every namespace when empty), as its own ServiceAccount with the shipped
// ClusterRole, and returns once its webhook server answers. It is
// setup.BuildManager with the flag defaults; what differs changes nothing
// the manager caches or reads: the health and metrics listeners are off;
// controller names may repeat (each phase of a benchmark starts a fresh
// manager in the same process); client-side rate limiting is off unless
// limits keeps the shipped limits; the manager's connections are its own,
// closed when it stops; its traffic is counted; and syncPeriod, when
// not zero, replaces --sync-period's default.
func startManager(ctx context.Context, namespace string, limits rateLimits, syncPeriod time.Duration) (*manager, error) {
	for k, v := range map[string]string{"POD_NAMESPACE": managerNamespace, "SERVICE_ACCOUNT_NAME": managerAccount} {
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	cfg, err := env.ControlPlane.AddUser(managerUser)
	if err != nil {
		return nil, err
	}
	if limits == unlimited {
		cfg.QPS = -1
	}
	counted := &traffic{}
	cfg.Wrap(counted.wrap)
	// A transport of the manager's own (client-go shares those of equal
	// configs, but not of configs with a proxy function), so that stop
	// can close its connections: left to their idle timeout, they would
	// be freed in the middle of the next phase's measurement.
	cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	_, port, certDir := env.ControlPlane.WebhookServer()
	o := setup.Defaults()
	o.RunnerImage, o.RunnerEvents, o.Namespace = "local/captf-manager:test", false, namespace
	if syncPeriod > 0 {
		o.SyncPeriod = syncPeriod
	}
	o.HealthAddr, o.DiagnosticsAddress, o.WebhookPort, o.WebhookCertDir = "0", "0", port, certDir
	built, err := setup.BuildManager(cfg, o, func(mo *ctrl.Options) {
		mo.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	})
	if err != nil {
		return nil, err
	}
	mgr, engine := built.Manager, built.Engine
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	m := &manager{engine: engine, traffic: counted, stop: sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			utilnet.CloseIdleConnectionsFor(mgr.GetHTTPClient().Transport)
			return err
		case <-time.After(time.Minute):
			return fmt.Errorf("the manager did not stop in a minute")
		}
	})}
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
