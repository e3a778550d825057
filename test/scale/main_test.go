// Package scale_test benchmarks the CAPTF manager with many
// TerraformMachines against the real API server and admission webhooks:
// the heap the manager keeps once every machine is provisioned, with small
// and with large states, and how many states an idle pass decompresses;
// and, under make scale, what an idle fleet of thousands costs and how
// long a restarted manager takes to catch up with it, and how fast it
// reacts to a new machine and to its Job's end. Each figure is
// printed as a ratio against a baseline measured in the same run, or as a
// target line against its goal, never asserted against a threshold.
//
// The tests and the benchmarks run a real control plane; the benchmarks'
// (`make bench`, `make scale`) runs kube-controller-manager too.
package scale_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	if os.Getenv("CAPTF_TEST_LOGS") != "" {
		log.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		log.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	}
	if os.Getenv(ProfileDirEnv) != "" {
		runtime.MemProfileRate = memProfileRate
	}
	// The benchmarks run Jobs (target 2): kube-controller-manager's Job
	// controller turns them into pods for the stand-in kubelet.
	flag.Parse()
	benchmarking := flag.Lookup("test.bench").Value.String() != ""
	os.Exit(envtest.Main(m, &env, envtest.Options{Webhooks: true, ClusterAPICRDs: true, ControllerManager: benchmarking}))
}

// The manager's identity, as the Deployment's downward API gives it.
const (
	managerNamespace = "captf-system"
	managerAccount   = "captf-controller-manager"
	managerUser      = "system:serviceaccount:" + managerNamespace + ":" + managerAccount
)

// bindShippedRole creates the manager's namespace (where it keeps its
// checkpoint) and config/rbac's manager and runner ClusterRoles, and binds
// the manager's to the manager's user, once per control plane.
func bindShippedRole(ctx context.Context) error {
	root, err := envtest.RepoRoot()
	if err != nil {
		return err
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
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
		if err := env.Client.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	err = env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "captf-manager-scale"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "captf-manager-role"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: managerUser}},
	})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
