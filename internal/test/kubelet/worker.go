package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// retryInterval is how often a pod waiting for its Secrets tries again.
const retryInterval = 250 * time.Millisecond

// worker takes one pod through its life on the node, once.
type worker struct {
	k    *Kubelet
	pod  *corev1.Pod
	bind bool

	// deleted is closed when the pod is being deleted or is gone.
	deleted  chan struct{}
	once     sync.Once
	gone     atomic.Bool
	finished atomic.Bool
}

func newWorker(k *Kubelet, pod *corev1.Pod, bind bool) *worker {
	return &worker{k: k, pod: pod, bind: bind, deleted: make(chan struct{})}
}

// kill tells the worker its pod is being deleted, or gone.
func (w *worker) kill(gone bool) {
	if gone {
		w.gone.Store(true)
	}
	w.once.Do(func() { close(w.deleted) })
}

func (w *worker) isDeleted() bool {
	select {
	case <-w.deleted:
		return true
	default:
		return false
	}
}

func (w *worker) isFinished() bool { return w.finished.Load() }

// live binds the pod, finds its image, lays out its filesystem, runs it and
// reports its end; a pod deleted meanwhile has its deletion completed.
func (w *worker) live() {
	defer w.k.wg.Done()
	if (!w.bind || w.bindPod()) && w.start() {
		w.waitDeleted()
	}
	// Marked finished before looking for a deletion, while onPod marks the
	// deletion before looking for finished: one of the two completes it.
	w.finished.Store(true)
	if w.isDeleted() && !w.gone.Load() && w.pod.Spec.NodeName == w.k.node {
		w.k.forceDelete(w.pod.Namespace, w.pod.Name, w.pod.UID)
	}
}

// start runs the pod; it returns true when the pod stays Pending for good
// (an unknown image, a container the kubelet cannot run).
func (w *worker) start() (stuck bool) {
	c, args, err := runnerContainer(w.pod)
	if err != nil {
		w.setPending(true, reasonCreateError, err.Error())
		return true
	}
	img, ok := lookup(w.k.images, c.Image)
	if !ok {
		msg := fmt.Sprintf("Failed to pull image %q: the CAPTF test kubelet has no such image (it has %s)",
			c.Image, strings.Join(knownRefs(w.k.images), ", "))
		w.k.event(w.pod, corev1.EventTypeWarning, "Failed", msg)
		w.setPending(true, reasonErrImagePull, msg)
		return true
	}
	root, environ, ok := w.prepare(c, img)
	if !ok {
		return false
	}
	w.runPod(c, args, img, root, environ)
	return false
}

// bindPod binds the pod to the node, as a scheduler would; it returns
// false when another kubelet took it or it is gone.
func (w *worker) bindPod() bool {
	err := w.k.cs.CoreV1().Pods(w.pod.Namespace).Bind(w.k.ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: w.pod.Name, Namespace: w.pod.Namespace, UID: w.pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: w.k.node},
	}, metav1.CreateOptions{})
	switch {
	case err == nil:
		w.pod.Spec.NodeName = w.k.node
		return true
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err) || w.k.ctx.Err() != nil:
		return false
	}
	w.k.problem("binding pod %s/%s: %v", w.pod.Namespace, w.pod.Name, err)
	return false
}

// runnerContainer finds the container running `runner run` and its
// arguments after "run".
func runnerContainer(pod *corev1.Pod) (*corev1.Container, []string, error) {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		argv := append(append([]string{}, c.Command...), c.Args...)
		if len(argv) >= 2 && argv[1] == "run" {
			return c, argv[2:], nil
		}
	}
	return nil, nil, errors.New("the CAPTF test kubelet runs only containers whose command is `runner run`")
}

// waitDeleted waits until the pod is deleted or the kubelet stops.
func (w *worker) waitDeleted() {
	select {
	case <-w.deleted:
	case <-w.k.ctx.Done():
	}
}

// setPending reports the pod Pending with its containers waiting.
func (w *worker) setPending(initDone bool, reason, msg string) {
	err := updateStatus(w.k.ctx, w.k.cs, w.pod.Namespace, w.pod.Name, w.pod.UID, func(p *corev1.Pod) {
		pending(p, initDone, reason, msg)
	})
	if err != nil && !apierrors.IsNotFound(err) && w.k.ctx.Err() == nil {
		w.k.problem("reporting pod %s/%s %s: %v", w.pod.Namespace, w.pod.Name, reason, err)
	}
}

// prepare lays out the container's filesystem and resolves its env,
// trying again while a Secret or ConfigMap is missing (the manager creates
// the per-run Secret after the Job). It returns false when the pod was
// deleted or the kubelet stopped first.
func (w *worker) prepare(c *corev1.Container, img image) (rootfs, []string, bool) {
	dir := w.k.podDir()
	root := rootfs(dir + "/rootfs")
	last := ""
	for {
		if err := os.RemoveAll(dir); err != nil {
			w.k.problem("cleaning %s: %v", dir, err)
			return "", nil, false
		}
		err := layout(w.k.ctx, w.k.cs, root, w.k.tools, img, w.pod, c)
		reason, initDone := reasonPodInitializing, false
		var environ []string
		if err == nil {
			reason, initDone = reasonConfigError, true
			environ, err = containerEnv(w.k.ctx, w.k.cs, root, w.pod, c)
		}
		if err == nil {
			return root, environ, true
		}
		if !errors.Is(err, errMount) && !errors.Is(err, errConfig) && w.k.ctx.Err() == nil {
			w.k.problem("preparing pod %s/%s: %v", w.pod.Namespace, w.pod.Name, err)
		}
		if msg := err.Error(); msg != last {
			last = msg
			if initDone {
				w.k.event(w.pod, corev1.EventTypeWarning, "Failed", "Error: "+msg)
			} else {
				w.k.event(w.pod, corev1.EventTypeWarning, "FailedMount", "MountVolume.SetUp failed: "+msg)
			}
			w.setPending(initDone, reason, msg)
		}
		select {
		case <-w.deleted:
			return "", nil, false
		case <-w.k.ctx.Done():
			return "", nil, false
		case <-time.After(retryInterval):
		}
	}
}

// podDir makes a new directory for a pod's files, short (see Start).
func (k *Kubelet) podDir() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pods++
	return filepath.Join(k.dir, strconv.Itoa(k.pods))
}

// imageIDs are the image IDs the pod's containers report.
func imageIDs(pod *corev1.Pod, c *corev1.Container, img image) map[string]string {
	ids := map[string]string{}
	for _, other := range pod.Spec.Containers {
		ids[other.Name] = refDigest(other.Image)
	}
	ids[c.Name] = img.id
	return ids
}

// uidOf is a pod's identity for status updates.
func (w *worker) uidOf() (string, string, types.UID) {
	return w.pod.Namespace, w.pod.Name, w.pod.UID
}

// finalContext is for the API calls that report a run's end, which must
// happen even when the kubelet is stopping.
func finalContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
