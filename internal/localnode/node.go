package localnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"captf.io/captf/internal/runner"
)

// Mode says how the node runs containers (see the package documentation).
type Mode string

const (
	// ModeAuto is ModeNamespace where it is available, else ModeInProcess.
	ModeAuto Mode = ""
	// ModeNamespace runs each container as a real process in a private
	// mount namespace with the pod's paths (root on Linux).
	ModeNamespace Mode = "namespace"
	// ModeInProcess runs the runner of each Job in this process, with its
	// paths moved into a directory standing for the container's root.
	ModeInProcess Mode = "in-process"
)

// Options configure a node.
type Options struct {
	// Kubeconfig is an admin kubeconfig of the cluster. The node reads and
	// writes pods, the Node, events, Secrets, ConfigMaps and service
	// account tokens with it; in-process runs reach the API server with it.
	Kubeconfig string
	// NodeName is the Node's name; empty generates one (captf-node-...).
	NodeName string
	// Images are image references the node has in memory; they come
	// before the image store's.
	Images map[string]Image
	// ImageStore, when set, is a directory of image root filesystems the
	// node pulls the other references from: <ImageStore>/<repository>/<tag>
	// (see WriteImage).
	ImageStore string
	// StateDir holds the node's files: pods/ (each pod's volumes and
	// container files, removed with the pod) and logs/ (pod logs, kept
	// until the next Start). Start empties both.
	StateDir string
	// Mode chooses how containers run.
	Mode Mode
	// LabelSelector limits the pods the node takes; empty takes every pod.
	LabelSelector string
	// Namespace, when set, limits the pods the node takes to one namespace
	// (tests running side by side each run their own node).
	Namespace string
	// MaxPods, when set, is how many pods the node runs at once, as a
	// kubelet's maxPods and its Node's pod capacity: the pods it has no
	// room for stay Pending, unbound, and are taken oldest first as
	// running ones end.
	MaxPods int
	// StopGrace bounds the grace period given to running containers when
	// the node stops (default 30s).
	StopGrace time.Duration
	// PullBackoff is how long a container whose image could not be pulled
	// waits before the next pull, doubling up to 5 minutes, as a
	// kubelet's image pull backoff (default 10s): the first half of each
	// wait it shows ErrImagePull, the second ImagePullBackOff.
	// PullBackoffMax, when set, is the longest wait instead of 5 minutes.
	PullBackoff, PullBackoffMax time.Duration
	// Log receives the node's own lines.
	Log logr.Logger
}

// Run is one container the node ran (a Job's module container).
type Run struct {
	Namespace, Pod, Container string
	// Job is the pod's job-name label; Labels all the pod's labels.
	Job    string
	Labels map[string]string
	// Op is the runner's --op (empty for another command); Image is the
	// container's image reference.
	Op, Image string
	// ImageID is the image ID the container reported (its status'
	// imageID); InitImageIDs are those of the pod's init containers, by
	// name.
	ImageID      string
	InitImageIDs map[string]string
	// ExitCode is the exit code; -1 while it runs.
	ExitCode int
	// Stopped is true when the pod's deletion, its deadline or the node's
	// stop was delivered as SIGTERM.
	Stopped bool
	// Result is the runner's result document, decoded from Message, the
	// container's termination message.
	Result  runner.Result
	Message string
	// Log is the tail (1 MiB) of the container's output.
	Log               string
	Started, Finished time.Time
}

// logTailBytes is how much of a container's log a Run keeps.
const logTailBytes = 1 << 20

// Node is a running node agent.
type Node struct {
	opts    Options
	log     logr.Logger
	cs      kubernetes.Interface
	config  *rest.Config
	name    string
	images  *imageSet
	rt      containerRuntime
	podsDir string

	ctx     context.Context
	cancel  context.CancelFunc
	factory informers.SharedInformerFactory
	wg      sync.WaitGroup

	mu         sync.Mutex
	stopped    bool
	workers    map[types.UID]*worker
	finalizing map[types.UID]bool
	pods       int // numbers pod directories, kept short
	// running counts the workers that hold one of MaxPods' places;
	// waiting are the unbound pods with no place yet.
	running  int
	waiting  map[types.UID]*corev1.Pod
	runs     []*Run
	problems []string
}

// Start registers the Node and plays its kubelet until Stop.
func Start(ctx context.Context, opts Options) (*Node, error) {
	if opts.StateDir == "" || opts.Kubeconfig == "" {
		return nil, errors.New("localnode: a state directory and a kubeconfig are required")
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 30 * time.Second
	}
	if opts.PullBackoff <= 0 {
		opts.PullBackoff = 10 * time.Second
	}
	if opts.PullBackoffMax <= 0 {
		opts.PullBackoffMax = maxPullBackoff
	}
	images, err := resolveImages(opts.Images)
	if err != nil {
		return nil, fmt.Errorf("localnode: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("localnode: %w", err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	n := &Node{
		opts: opts, log: opts.Log, config: cfg, images: &imageSet{mem: images, store: opts.ImageStore}, podsDir: filepath.Join(opts.StateDir, "pods"),
		workers: map[types.UID]*worker{}, finalizing: map[types.UID]bool{}, waiting: map[types.UID]*corev1.Pod{},
	}
	if n.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if n.rt, err = newRuntime(n, opts.Mode); err != nil {
		return nil, err
	}
	for _, d := range []string{n.podsDir, filepath.Join(opts.StateDir, logsDir)} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	if err := n.registerNode(ctx); err != nil {
		n.cancel()
		return nil, fmt.Errorf("localnode: registering the Node: %w", err)
	}
	n.log.Info("Node registered", "node", n.name, "mode", n.rt.mode())
	n.factory = informers.NewSharedInformerFactoryWithOptions(n.cs, 0, informers.WithNamespace(opts.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = opts.LabelSelector }))
	pods := n.factory.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { n.onPod(obj, false) },
		UpdateFunc: func(_, obj any) { n.onPod(obj, false) },
		DeleteFunc: func(obj any) { n.onPod(obj, true) },
	}); err != nil {
		n.Stop()
		return nil, err
	}
	n.factory.Start(n.ctx.Done())
	for typ, ok := range n.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			n.Stop()
			return nil, fmt.Errorf("localnode: the %v informer did not sync", typ)
		}
	}
	return n, nil
}

// NodeName is the name of the node's Node.
func (n *Node) NodeName() string { return n.name }

// Mode is how the node runs containers.
func (n *Node) Mode() Mode { return n.rt.mode() }

// Runs lists the containers started so far, in start order.
func (n *Node) Runs() []Run {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Run, 0, len(n.runs))
	for _, r := range n.runs {
		out = append(out, *r)
	}
	return out
}

// Logs returns the kept output of a container of a pod (see ReadLog).
func (n *Node) Logs(namespace, pod, container string) ([]byte, error) {
	return ReadLog(n.opts.StateDir, namespace, pod, container)
}

// Problems lists the failures of the node itself (API calls it could not
// make, a runner that panicked), which tests report.
func (n *Node) Problems() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.problems...)
}

// registerNode creates the node's Node, Ready.
func (n *Node) registerNode(ctx context.Context) error {
	meta := metav1.ObjectMeta{Name: n.opts.NodeName, Labels: map[string]string{corev1.LabelOSStable: "linux"}}
	if meta.Name == "" {
		meta.GenerateName = "captf-node-"
	}
	node, err := n.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: meta}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		node, err = n.cs.CoreV1().Nodes().Get(ctx, meta.Name, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	n.name = node.Name
	now := metav1.Now()
	node.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "the CAPTF local node is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
	}}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: hostIP}, {Type: corev1.NodeHostName, Address: node.Name}}
	if n.opts.MaxPods > 0 {
		pods := *resource.NewQuantity(int64(n.opts.MaxPods), resource.DecimalSI)
		node.Status.Capacity = corev1.ResourceList{corev1.ResourcePods: pods}
		node.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: pods}
	}
	node.Status.NodeInfo.KubeletVersion = "captf-localnode"
	node.Status.NodeInfo.ContainerRuntimeVersion = "captf-local://" + string(n.rt.mode())
	_, err = n.cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

// Stop ends the node: running containers get SIGTERM (SIGKILL after the
// stop grace) and their pods report their end, then the Node is deleted
// and the pods' files removed. Logs stay.
func (n *Node) Stop() {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	n.stopped = true
	n.mu.Unlock()
	n.cancel()
	n.wg.Wait()
	if n.factory != nil {
		n.factory.Shutdown()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.cs.CoreV1().Nodes().Delete(ctx, n.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		n.problem("deleting the Node %s: %v", n.name, err)
	}
	if err := os.RemoveAll(n.podsDir); err != nil {
		n.problem("removing %s: %v", n.podsDir, err)
	}
}

// problem records a failure of the node itself.
func (n *Node) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	n.log.Error(errors.New(msg), "Local node problem")
	n.mu.Lock()
	defer n.mu.Unlock()
	n.problems = append(n.problems, msg)
}

// ca is the API server's CA, as a pod's service account volume holds it.
func (n *Node) ca() []byte {
	if len(n.config.CAData) > 0 {
		return n.config.CAData
	}
	data, err := os.ReadFile(n.config.CAFile)
	if err != nil {
		n.problem("reading the API server's CA: %v", err)
	}
	return data
}
