package devenv

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// capiManager is one of Cluster API's managers the tool cache holds.
type capiManager struct {
	// name says which, in messages.
	name string
	// dir is the tool cache directory of its CRDs and webhook manifests.
	dir string
	// bin is its binary in the tool cache's bin/.
	bin string
	// args are its flags besides the common ones.
	args []string
}

// capiManagers are the Cluster API managers the local environment runs:
// the core manager with the MachinePool and ClusterTopology feature gates
// on and, with kubeadm, kubeadm's bootstrap and control plane providers,
// so that ClusterClasses and bootstrap data work as in production. Their
// CRDs are large: the API server takes about 20 s more to start with them,
// and the managers about 10 s, so they run only when asked.
func capiManagers(kubeadm bool) []capiManager {
	out := []capiManager{{name: "Cluster API core manager", dir: "capi", bin: "capi-manager", args: []string{"--feature-gates=MachinePool=true,ClusterTopology=true"}}}
	if kubeadm {
		out = append(out,
			capiManager{name: "kubeadm bootstrap provider", dir: "capi-kubeadm-bootstrap", bin: "capi-kubeadm-bootstrap", args: []string{"--feature-gates=MachinePool=true"}},
			capiManager{name: "kubeadm control plane provider", dir: "capi-kubeadm-control-plane", bin: "capi-kubeadm-control-plane", args: []string{"--feature-gates=ClusterTopology=true"}})
	}
	return out
}

// capiCRDDirs are the CRD directories of the Cluster API managers to run.
func capiCRDDirs(tools string, kubeadm bool) []string {
	var out []string
	for _, m := range capiManagers(kubeadm) {
		if d := filepath.Join(tools, m.dir, "crd"); isDir(d) {
			out = append(out, d)
		}
	}
	return out
}

// startCAPI starts the Cluster API managers side by side; Down stops
// them.
func (e *Env) startCAPI(ctx context.Context, log *os.File, kubeadm bool) error {
	managers := capiManagers(kubeadm)
	stops := make([]func(), len(managers))
	errs := make([]error, len(managers))
	var wg sync.WaitGroup
	for i, m := range managers {
		wg.Go(func() {
			stops[i], errs[i] = e.startCAPIManager(ctx, m, log)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", m.name, errs[i])
			}
		})
	}
	wg.Wait()
	for _, stop := range stops {
		if stop != nil {
			e.stopCAPI = append(e.stopCAPI, stop)
		}
	}
	return errors.Join(errs...)
}

// startCAPIManager installs a Cluster API manager's webhooks, pointed at a
// local server that uses the control plane's webhook certificate, and runs
// the real manager from the tool cache until its readiness probe passes.
func (e *Env) startCAPIManager(ctx context.Context, m capiManager, log *os.File) (func(), error) {
	bin := filepath.Join(e.Tools, "bin", m.bin)
	manifests := filepath.Join(e.Tools, m.dir, "webhook", "manifests.yaml")
	for _, p := range []string{bin, manifests} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s is missing: run `make tools`", p)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := e.installCAPIWebhooks(ctx, m.dir, manifests, port); err != nil {
		return nil, err
	}
	health, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, _, certDir := e.cp.WebhookServer()
	args := append([]string{"--kubeconfig=" + e.Kubeconfig, "--leader-elect=false", "--diagnostics-address=0", "--insecure-diagnostics",
		"--health-addr=" + health, "--webhook-port=" + strconv.Itoa(port), "--webhook-cert-dir=" + certDir}, m.args...)
	cmd := exec.Command(bin, args...)
	if log != nil {
		cmd.Stdout, cmd.Stderr = log, log
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // a stopped manager always reports a signal
		close(done)
	}()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	return stop, wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("it exited; see its log")
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

// installCAPIWebhooks creates a Cluster API manager's webhook
// configurations, their names prefixed, with every entry sent to
// https://127.0.0.1:port instead of its Service.
func (e *Env) installCAPIWebhooks(ctx context.Context, prefix, manifests string, port int) error {
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
		o.SetName(prefix + "-" + o.GetName())
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
