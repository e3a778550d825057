package localnode

import (
	"cmp"
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// onPod is every informer event: it starts a pod's worker, tells a worker
// its pod is being deleted, or completes a deletion nothing waits for.
func (n *Node) onPod(obj any, gone bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if gone || pod.DeletionTimestamp != nil || pod.Spec.NodeName != "" {
		delete(n.waiting, pod.UID)
	}
	w := n.workers[pod.UID]
	switch {
	case w != nil && (gone || pod.DeletionTimestamp != nil):
		w.kill(gone, pod.DeletionGracePeriodSeconds)
		if !gone && w.isFinished() && pod.Spec.NodeName == n.name {
			n.finalizeLocked(pod)
		}
	case w != nil || gone || n.stopped || terminal(pod):
	case pod.DeletionTimestamp != nil:
		if pod.Spec.NodeName == n.name {
			n.finalizeLocked(pod)
		}
	case pod.Spec.NodeName == "" && n.opts.MaxPods > 0 && n.running >= n.opts.MaxPods:
		n.waiting[pod.UID] = pod.DeepCopy()
	case pod.Spec.NodeName == "" || pod.Spec.NodeName == n.name:
		n.admitLocked(pod)
	}
}

// admitLocked starts a worker for pod, in one of the node's places. n.mu
// is held.
func (n *Node) admitLocked(pod *corev1.Pod) {
	n.pods++
	n.running++
	w := newWorker(n, pod.DeepCopy(), pod.Spec.NodeName == "", filepath.Join(n.podsDir, strconv.Itoa(n.pods)))
	n.workers[pod.UID] = w
	n.wg.Add(1)
	go w.live()
}

// release gives back a finished worker's place and takes the oldest
// waiting pods into the free places.
func (n *Node) release() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.running--
	if n.stopped {
		return
	}
	next := slices.SortedFunc(maps.Values(n.waiting), func(a, b *corev1.Pod) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	for _, pod := range next {
		if n.running >= n.opts.MaxPods {
			return
		}
		delete(n.waiting, pod.UID)
		n.admitLocked(pod)
	}
}

func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// finalizeLocked completes a graceful deletion of a pod of this node that
// runs nothing, as a kubelet does once its containers are gone: a delete
// with no grace. n.mu is held.
func (n *Node) finalizeLocked(pod *corev1.Pod) {
	if pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0 || n.finalizing[pod.UID] || n.stopped {
		return
	}
	n.finalizing[pod.UID] = true
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.forceDelete(pod.Namespace, pod.Name, pod.UID)
	}()
}

// forceDelete deletes the pod with uid with no grace period.
func (n *Node) forceDelete(ns, name string, uid types.UID) {
	ctx, cancel := finalContext()
	defer cancel()
	err := n.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64),
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		n.problem("deleting pod %s/%s: %v", ns, name, err)
	}
}

// event posts a core event about the pod, as a kubelet does; best effort.
func (n *Node) event(pod *corev1.Pod, typ, reason, msg string) {
	ctx, cancel := finalContext()
	defer cancel()
	now := metav1.Now()
	_, _ = n.cs.CoreV1().Events(pod.Namespace).Create(ctx, &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		},
		Type: typ, Reason: reason, Message: msg, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Source:              corev1.EventSource{Component: "kubelet", Host: n.name},
		ReportingController: "kubelet", ReportingInstance: n.name,
	}, metav1.CreateOptions{})
}

// finalContext is for the API calls that report a pod's end, which must
// happen even when the node is stopping.
func finalContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
