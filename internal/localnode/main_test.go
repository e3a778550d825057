package localnode_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/test/envtest"
)

// env runs etcd, kube-apiserver and kube-controller-manager (the Job
// controller makes the pods of Jobs).
var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{ControllerManager: true}, func() {
		if runnerBin != "" {
			_ = os.RemoveAll(filepath.Dir(runnerBin))
		}
	}))
}

// Image references the tests' nodes have.
const (
	runnerImage = "local/captf-runner:test"
	shellImage  = "local/shell:test"
	markerPath  = "/opt/probe/marker"
)

var (
	runnerOnce sync.Once
	runnerBin  string
	runnerErr  error
)

// buildRunner builds cmd/runner once, static, as the runner image holds it.
func buildRunner(t *testing.T) string {
	t.Helper()
	runnerOnce.Do(func() {
		root, err := envtest.RepoRoot()
		if err != nil {
			runnerErr = err
			return
		}
		dir, err := os.MkdirTemp("", "runner-bin-")
		if err != nil {
			runnerErr = err
			return
		}
		runnerBin = filepath.Join(dir, "runner")
		cmd := exec.Command("go", "build", "-o", runnerBin, "./cmd/runner")
		cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			runnerErr = fmt.Errorf("building the runner: %w\n%s", err, out)
		}
	})
	if runnerErr != nil {
		t.Fatal(runnerErr)
	}
	return runnerBin
}

// requireNamespaces skips a test of ModeNamespace where it cannot run.
func requireNamespaces(t *testing.T) {
	t.Helper()
	envtest.Require(t, env)
	if err := localnode.NamespaceSupport(); err != nil {
		t.Skipf("SKIP: ModeNamespace cannot run here: %v", err)
	}
}

// startNode starts a node in ModeNamespace with the example module images
// for both runtimes, the runner image and a shell image (the host's base
// layer and a marker file at /opt/probe/marker).
func startNode(t *testing.T) *localnode.Node {
	t.Helper()
	return startNodeWith(t, nil)
}

// startNodeWith is startNode with the options changed by change.
func startNodeWith(t *testing.T, change func(*localnode.Options)) *localnode.Node {
	t.Helper()
	requireNamespaces(t)
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "localnode-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	kc, err := env.ControlPlane.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	marker := filepath.Join(dir, "marker")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, []byte("from the image"), 0o644); err != nil {
		t.Fatal(err)
	}
	images := map[string]localnode.Image{
		runnerImage: localnode.RunnerImage(buildRunner(t)),
		shellImage:  {Paths: map[string]string{markerPath: marker}},
	}
	for _, m := range []string{"noop-cluster", "slow"} {
		for _, rt := range []string{"tofu", "terraform"} {
			images["local/"+m+":"+rt] = localnode.ModuleImage(filepath.Join(root, "examples", "modules", m),
				filepath.Join(env.Tools, "bin", rt), filepath.Join(env.Tools, "providers"))
		}
	}
	opts := localnode.Options{
		Kubeconfig: kubeconfig, Images: images, StateDir: filepath.Join(dir, "state"), Mode: localnode.ModeNamespace,
		StopGrace: 5 * time.Second,
	}
	if change != nil {
		change(&opts)
	}
	n, err := localnode.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Stop()
		for _, p := range n.Problems() {
			t.Errorf("node: %s", p)
		}
	})
	return n
}

// namespace creates a fresh namespace with a ServiceAccount named sa.
func namespace(t *testing.T, sa string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ln-"}}
	create(t, ns)
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: sa}})
	return ns.Name
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

var roleOnce sync.Once

// bindRunnerRole lets sa in ns do what config/rbac/runner_role.yaml allows
// a runner, as the manager's RoleBinding does.
func bindRunnerRole(t *testing.T, ns, sa string) {
	t.Helper()
	roleOnce.Do(func() {
		root, err := envtest.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(root, "config", "rbac", "runner_role.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal(raw, role); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(context.Background(), role); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	})
	create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "captf-runner"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "captf-runner"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	})
}

// waitPod waits until the pod satisfies cond and returns it.
func waitPod(t *testing.T, key client.ObjectKey, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, key, pod); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(pod), nil
	})
	if err != nil {
		t.Fatalf("pod %s is not %s: %v (status %+v)", key, what, err, pod.Status)
	}
	return pod
}

// waitGone waits until the object is deleted.
func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("%T %s was not deleted: %v", obj, obj.GetName(), err)
	}
}

// runOf finds the node's record of a pod's container.
func runOf(t *testing.T, n *localnode.Node, pod string) localnode.Run {
	t.Helper()
	for _, r := range n.Runs() {
		if r.Pod == pod {
			return r
		}
	}
	t.Fatalf("the node has no run of pod %s", pod)
	return localnode.Run{}
}

func terminated(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
