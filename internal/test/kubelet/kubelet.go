package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/envtest"
)

// Run is one pod the kubelet ran the runner for.
type Run struct {
	Namespace, Pod string
	// Job is the pod's job-name label.
	Job string
	// Op is the runner's --op; Image the container's image reference.
	Op, Image string
	// ExitCode is the runner's exit code; -1 while it runs.
	ExitCode int
	// Stopped is true when the pod's deletion (or the kubelet's stop)
	// was delivered to the runner as SIGTERM.
	Stopped bool
	// Result is the runner's result document and Message the pod's
	// termination message.
	Result  runner.Result
	Message string
	// Log is the pod log: the runner's and the runtime's output (its
	// last MiB).
	Log               string
	Started, Finished time.Time
}

// Kubelet runs the pods of CAPTF Jobs on its own Node.
type Kubelet struct {
	t          testing.TB
	cs         kubernetes.Interface
	node       string
	kubeconfig string
	dir        string
	tools      string
	images     map[string]image

	ctx     context.Context
	cancel  context.CancelFunc
	factory informers.SharedInformerFactory
	wg      sync.WaitGroup

	mu         sync.Mutex
	stopped    bool
	workers    map[types.UID]*worker
	finalizing map[types.UID]bool
	// pods numbers the pods run, for short directory names.
	pods     int
	runs     []*Run
	problems []string
}

// logTailBytes is how much of a pod's log a Run keeps.
const logTailBytes = 1 << 20

// Start registers a Node and plays its kubelet until the test ends: every
// pending pod labelled captf.io/managed=true that no other kubelet took is
// bound to the Node and run. images says which module image references
// exist; a missing module directory or runtime fails the test.
func Start(t testing.TB, env *envtest.Env, images map[string]Image) *Kubelet {
	t.Helper()
	envtest.Require(t, env)
	k := &Kubelet{
		t: t, tools: env.Tools, images: resolveImages(t, env.Tools, images),
		workers: map[types.UID]*worker{}, finalizing: map[types.UID]bool{},
	}
	// Not t.TempDir: the path of a test's directory grows with the test's
	// name, and a provider's plugin socket under the pod's TMPDIR must fit
	// the 108 bytes of a unix socket path.
	var err error
	if k.dir, err = os.MkdirTemp("", "kubelet-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(k.dir) })
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 100, 200
	if k.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	kc, err := env.ControlPlane.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	k.kubeconfig = filepath.Join(k.dir, "kubeconfig")
	if err := os.WriteFile(k.kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	if err := k.registerNode(); err != nil {
		t.Fatalf("kubelet: registering the Node: %v", err)
	}
	t.Cleanup(k.stop)
	k.factory = informers.NewSharedInformerFactoryWithOptions(k.cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = infrav1.ManagedLabel + "=true"
	}))
	pods := k.factory.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.onPod(obj, false) },
		UpdateFunc: func(_, obj any) { k.onPod(obj, false) },
		DeleteFunc: func(obj any) { k.onPod(obj, true) },
	}); err != nil {
		t.Fatal(err)
	}
	k.factory.Start(k.ctx.Done())
	for typ, ok := range k.factory.WaitForCacheSync(k.ctx.Done()) {
		if !ok {
			t.Fatalf("kubelet: the %v informer did not sync", typ)
		}
	}
	return k
}

// NodeName is the name of the kubelet's Node.
func (k *Kubelet) NodeName() string { return k.node }

// Runs lists the runs started so far, in start order.
func (k *Kubelet) Runs() []Run {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]Run, 0, len(k.runs))
	for _, r := range k.runs {
		out = append(out, *r)
	}
	return out
}

// registerNode creates the kubelet's Node, Ready.
func (k *Kubelet) registerNode() error {
	n, err := k.cs.CoreV1().Nodes().Create(k.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "captf-test-node-",
		Labels:       map[string]string{corev1.LabelOSStable: "linux"},
	}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	k.node = n.Name
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "the CAPTF test kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
	}}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: hostIP}, {Type: corev1.NodeHostName, Address: n.Name}}
	_, err = k.cs.CoreV1().Nodes().UpdateStatus(k.ctx, n, metav1.UpdateOptions{})
	return err
}

// onPod is every informer event: it starts a pod's worker, tells a worker
// its pod is being deleted, or completes a deletion nothing waits for.
func (k *Kubelet) onPod(obj any, gone bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	w := k.workers[pod.UID]
	switch {
	case w != nil && (gone || pod.DeletionTimestamp != nil):
		w.kill(gone)
		if !gone && w.isFinished() && pod.Spec.NodeName == k.node {
			k.finalizeLocked(pod)
		}
	case w != nil || gone || k.stopped || terminal(pod):
	case pod.DeletionTimestamp != nil:
		if pod.Spec.NodeName == k.node {
			k.finalizeLocked(pod)
		}
	case pod.Spec.NodeName == "" || pod.Spec.NodeName == k.node:
		w := newWorker(k, pod.DeepCopy(), pod.Spec.NodeName == "")
		k.workers[pod.UID] = w
		k.wg.Add(1)
		go w.live()
	}
}

func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// finalizeLocked completes a graceful deletion of a pod of this node that
// runs nothing, as a kubelet does once its containers are gone: a delete
// with no grace. k.mu is held.
func (k *Kubelet) finalizeLocked(pod *corev1.Pod) {
	if pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0 || k.finalizing[pod.UID] || k.stopped {
		return
	}
	k.finalizing[pod.UID] = true
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		k.forceDelete(pod.Namespace, pod.Name, pod.UID)
	}()
}

// forceDelete deletes the pod with uid with no grace period.
func (k *Kubelet) forceDelete(ns, name string, uid types.UID) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := k.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64),
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.problem("deleting pod %s/%s: %v", ns, name, err)
	}
}

// problem records a failure of the kubelet itself, reported when the test
// ends.
func (k *Kubelet) problem(format string, args ...any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.problems = append(k.problems, fmt.Sprintf(format, args...))
}

// event posts a core event about the pod, as a kubelet does; best effort.
func (k *Kubelet) event(pod *corev1.Pod, typ, reason, msg string) {
	now := metav1.Now()
	_, _ = k.cs.CoreV1().Events(pod.Namespace).Create(context.Background(), &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		},
		Type: typ, Reason: reason, Message: msg, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Source:              corev1.EventSource{Component: "kubelet", Host: k.node},
		ReportingController: "kubelet", ReportingInstance: k.node,
	}, metav1.CreateOptions{})
}

// stop ends the kubelet when the test ends: runs still going get SIGTERM
// and report their end, then the Node goes. Problems of the kubelet fail
// the test; a failed test gets the pod logs.
func (k *Kubelet) stop() {
	k.mu.Lock()
	k.stopped = true
	k.mu.Unlock()
	k.cancel()
	k.wg.Wait()
	k.factory.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.cs.CoreV1().Nodes().Delete(ctx, k.node, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		k.problem("deleting the Node %s: %v", k.node, err)
	}
	for _, p := range k.problems {
		k.t.Errorf("kubelet: %s", p)
	}
	if k.t.Failed() {
		for _, r := range k.Runs() {
			k.t.Logf("kubelet: log of pod %s/%s (%s, exit %d):\n%s", r.Namespace, r.Pod, r.Op, r.ExitCode, r.Log)
		}
	}
}
