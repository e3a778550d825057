package devenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"captf.io/captf/internal/setup"
)

// The manager's identity, as its Deployment gives it through the downward
// API: its webhooks let only this user write what only the manager writes.
const (
	managerNamespace = "captf-system"
	managerAccount   = "captf-controller-manager"
)

// startManager runs the CAPTF manager in this process, built exactly as
// cmd/manager builds it and authenticated as its ServiceAccount with the
// ClusterRole config/rbac ships, serving the webhooks the control plane
// was told about, and returns once it reports ready (its webhook server
// serves).
func (e *Env) startManager(ctx context.Context) error {
	cfg, err := e.managerConfig(ctx)
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
	mgr, err := setup.NewManager(cfg, o)
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

// managerConfig authenticates as the manager's ServiceAccount, bound to
// the shipped manager ClusterRole, and gives this process the downward-API
// variables the manager reads its identity from.
func (e *Env) managerConfig(ctx context.Context) (*rest.Config, error) {
	for k, v := range map[string]string{"POD_NAMESPACE": managerNamespace, "SERVICE_ACCOUNT_NAME": managerAccount} {
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	user := "system:serviceaccount:" + managerNamespace + ":" + managerAccount
	role, err := ReadManifests(filepath.Join(e.Repo, "config", "rbac", "role.yaml"))
	if err != nil {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "captf-manager-rolebinding"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role[0].GetName()},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if err := Create(ctx, e.Client, role); err != nil {
		return nil, err
	}
	if err := e.Client.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	return e.cp.AddUser(user)
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
