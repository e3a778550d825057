package localnode

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// retryInterval is how often a pod waiting for a Secret tries again.
const retryInterval = 250 * time.Millisecond

// worker takes one pod through its life on the node, once.
type worker struct {
	n    *Node
	pod  *corev1.Pod
	bind bool
	// dir holds the pod's volumes and container files.
	dir string
	// token says whether the pod gets a service account token.
	token bool
	view  *podView
	// started is when the node took the pod, for its active deadline.
	started time.Time

	// deleted is closed when the pod is being deleted or is gone; grace is
	// its deletion's grace period in seconds (-1 when none was given).
	deleted  chan struct{}
	once     sync.Once
	grace    atomic.Int64
	gone     atomic.Bool
	finished atomic.Bool
}

func newWorker(n *Node, pod *corev1.Pod, bind bool, dir string) *worker {
	w := &worker{n: n, pod: pod, bind: bind, dir: dir, view: newPodView(pod), deleted: make(chan struct{}), started: time.Now()}
	w.token = n.rt.tokens() && automountToken(pod)
	w.grace.Store(-1)
	return w
}

// kill tells the worker its pod is being deleted (with grace seconds when
// given), or gone.
func (w *worker) kill(gone bool, grace *int64) {
	if grace != nil {
		w.grace.Store(*grace)
	}
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

// live binds the pod, writes its volumes, runs its containers and reports
// its end; a pod deleted meanwhile has its deletion completed.
func (w *worker) live() {
	defer w.n.wg.Done()
	if (!w.bind || w.bindPod()) && w.run() {
		w.waitDeleted()
	}
	if err := os.RemoveAll(w.dir); err != nil {
		w.n.problem("removing %s: %v", w.dir, err)
	}
	// Marked finished before looking for a deletion, while onPod marks the
	// deletion before looking for finished: one of the two completes it.
	w.finished.Store(true)
	w.n.release()
	if w.isDeleted() && !w.gone.Load() && w.pod.Spec.NodeName == w.n.name {
		w.n.forceDelete(w.pod.Namespace, w.pod.Name, w.pod.UID)
	}
}

// run takes the pod through its init containers, in order, then its
// containers. It returns true when the pod stays Pending for good (an
// image the node does not have, a container it cannot run).
func (w *worker) run() (stuck bool) {
	if !w.prepare() {
		return false
	}
	for i := range w.pod.Spec.InitContainers {
		c := &w.pod.Spec.InitContainers[i]
		r, res := w.start(c, &w.view.init[i], true)
		switch res {
		case startStuck:
			return true
		case startAbandoned:
			return false
		case startStoodIn:
			continue
		}
		w.supervise([]*running{r})
		w.finish(r)
		w.report(true)
		if r.st.code != 0 || w.view.reason != "" || w.isDeleted() || w.n.ctx.Err() != nil {
			return false
		}
	}
	var rs []*running
	for i := range w.pod.Spec.Containers {
		c := &w.pod.Spec.Containers[i]
		r, res := w.start(c, &w.view.main[i], false)
		if res == startStarted {
			rs = append(rs, r)
			continue
		}
		// A pod runs all its containers or none: stop those started.
		w.stopWithin(rs, allDone(rs), w.specGrace())
		w.end(rs)
		return res == startStuck
	}
	w.report(false)
	w.supervise(rs)
	w.end(rs)
	return false
}

// end records the end of containers that ran and exited.
func (w *worker) end(rs []*running) {
	if len(rs) == 0 {
		return
	}
	for _, r := range rs {
		w.finish(r)
	}
	w.report(true)
}

// bindPod binds the pod to the node, as a scheduler would; it returns
// false when another node took it or it is gone.
func (w *worker) bindPod() bool {
	err := w.n.cs.CoreV1().Pods(w.pod.Namespace).Bind(w.n.ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: w.pod.Name, Namespace: w.pod.Namespace, UID: w.pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: w.n.name},
	}, metav1.CreateOptions{})
	switch {
	case err == nil:
		w.pod.Spec.NodeName = w.n.name
		return true
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err) || w.n.ctx.Err() != nil:
		return false
	}
	w.n.problem("binding pod %s/%s: %v", w.pod.Namespace, w.pod.Name, err)
	return false
}

// prepare writes the pod's volumes (and its token), trying again while a
// Secret or ConfigMap is missing (the manager creates the per-run Secret
// after the Job). It returns false when the pod was deleted or the node
// stopped first.
func (w *worker) prepare() bool {
	last := ""
	for {
		err := writeVolumes(w.n.ctx, w.n.cs, w.dir, w.pod)
		if err == nil && w.token {
			err = addToken(w.n.ctx, w.n.cs, w.dir, w.pod, w.n.ca())
		}
		if err == nil {
			return true
		}
		if !errors.Is(err, errMount) && w.n.ctx.Err() == nil {
			w.n.problem("preparing pod %s/%s: %v", w.pod.Namespace, w.pod.Name, err)
		}
		if msg := err.Error(); msg != last {
			last = msg
			w.n.event(w.pod, corev1.EventTypeWarning, "FailedMount", "MountVolume.SetUp failed: "+msg)
			for i := range w.view.main {
				w.view.main[i].waiting = &corev1.ContainerStateWaiting{Reason: reasonPodInitializing, Message: msg}
			}
			w.report(false)
		}
		if !w.pause() {
			return false
		}
	}
}

// pause waits retryInterval; false when the pod was deleted or the node
// stopped meanwhile.
func (w *worker) pause() bool { return w.pauseFor(retryInterval) }

// pauseFor waits d; false when the pod was deleted or the node stopped
// first.
func (w *worker) pauseFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.deleted:
		return false
	case <-w.n.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// waitDeleted waits until the pod is deleted or the node stops.
func (w *worker) waitDeleted() {
	select {
	case <-w.deleted:
	case <-w.n.ctx.Done():
	}
}

// report writes the node's view into the pod's status; final reports are
// made even while the node stops.
func (w *worker) report(final bool) {
	ctx := w.n.ctx
	if final {
		c, cancel := finalContext()
		defer cancel()
		ctx = c
	}
	err := updateStatus(ctx, w.n.cs, w.pod.Namespace, w.pod.Name, w.pod.UID, w.view.apply)
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		w.n.problem("reporting the status of pod %s/%s: %v", w.pod.Namespace, w.pod.Name, err)
	}
}

// jobName is the name of the Job that owns the pod.
func jobName(pod *corev1.Pod) string {
	if name := pod.Labels[batchv1.JobNameLabel]; name != "" {
		return name
	}
	return pod.Labels["job-name"]
}
