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
	mgr, err := setup.NewManager(e.cp.Config, setup.Options{
		HealthAddr: health, DiagnosticsAddress: "0", WebhookPort: port, WebhookCertDir: certDir,
		WebhookCertName: "tls.crt", WebhookKeyName: "tls.key", SyncPeriod: 10 * time.Minute,
	})
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
