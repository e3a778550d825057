package devenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"captf.io/captf/internal/setup"
)

// startManager runs the CAPTF manager in this process, built exactly as
// cmd/manager builds it, serving the webhooks the control plane was told
// about, and returns once it reports ready (its webhook server serves).
func (e *Env) startManager(ctx context.Context) error {
	_, port, certDir := e.cp.WebhookServer()
	health, err := freeAddr()
	if err != nil {
		return err
	}
	o := setup.Defaults()
	o.HealthAddr, o.DiagnosticsAddress, o.WebhookPort, o.WebhookCertDir = health, "0", port, certDir
	o.RunnerImage = RunnerImage
	mgr, err := setup.NewManager(e.cp.Config, o)
	if err != nil {
		return err
	}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var startErr error // read only after done is closed
	done := make(chan struct{})
	go func() {
		startErr = mgr.Start(mctx)
		close(done)
	}()
	e.stopManager = func() {
		cancel()
		<-done
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("the manager stopped: %w", startErr)
		default:
		}
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the manager to be ready: %w", err)
	}
	return nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// RunnerImage is the runner image the local environment's Jobs name; the
// local node supplies the runner binary for it.
const RunnerImage = "local/captf-manager:dev"
