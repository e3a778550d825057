package devenv

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// startCAPI installs Cluster API's webhooks, pointed at a local server that
// uses the control plane's webhook certificate, and runs the real Cluster
// API core manager from the tool cache, so that Clusters, Machines and
// MachinePools own and consume CAPTF's objects as in production.
func (e *Env) startCAPI(ctx context.Context, log *os.File) error {
	bin := filepath.Join(e.Tools, "bin", "capi-manager")
	manifests := filepath.Join(e.Tools, "capi", "webhook", "manifests.yaml")
	for _, p := range []string{bin, manifests} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s is missing: run `make tools`", p)
		}
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	if err := e.installCAPIWebhooks(ctx, manifests, port); err != nil {
		return err
	}
	health, err := freeAddr()
	if err != nil {
		return err
	}
	_, _, certDir := e.cp.WebhookServer()
	cmd := exec.Command(bin,
		"--kubeconfig="+e.Kubeconfig, "--leader-elect=false", "--diagnostics-address=0", "--insecure-diagnostics",
		"--health-addr="+health, "--webhook-port="+strconv.Itoa(port), "--webhook-cert-dir="+certDir)
	if log != nil {
		cmd.Stdout, cmd.Stderr = log, log
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the Cluster API manager: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // a stopped manager always reports a signal
		close(done)
	}()
	e.stopCAPI = func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("the Cluster API manager exited; see its log")
		default:
		}
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// installCAPIWebhooks creates Cluster API's webhook configurations with
// every entry sent to https://127.0.0.1:port instead of its Service.
func (e *Env) installCAPIWebhooks(ctx context.Context, manifests string, port int) error {
	objs, err := ReadManifests(manifests)
	if err != nil {
		return err
	}
	for _, o := range objs {
		hooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
		if err != nil {
			return err
		}
		for _, h := range hooks {
			hook := h.(map[string]any)
			path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			hook["clientConfig"] = map[string]any{
				"url":      fmt.Sprintf("https://127.0.0.1:%d%s", port, path),
				"caBundle": base64.StdEncoding.EncodeToString(e.cp.WebhookCA()),
			}
		}
		if err := unstructured.SetNestedSlice(o.Object, hooks, "webhooks"); err != nil {
			return err
		}
		o.SetName("capi-" + o.GetName())
	}
	return Create(ctx, e.Client, objs)
}

func freePort() (int, error) {
	addr, err := freeAddr()
	if err != nil {
		return 0, err
	}
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(p)
}
