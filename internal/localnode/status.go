package localnode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// hostIP is the node's address, reported as the pod's too.
const hostIP = "127.0.0.1"

// maxMessageBytes is what a kubelet keeps of a termination message.
const maxMessageBytes = 4096

// Reasons a kubelet reports.
const (
	reasonErrImagePull     = "ErrImagePull"
	reasonImagePullBackOff = "ImagePullBackOff"
	reasonPodInitializing  = "PodInitializing"
	reasonConfigError      = "CreateContainerConfigError"
	reasonCreateError      = "CreateContainerError"
	reasonCompleted        = "Completed"
	reasonError            = "Error"
	reasonPodCompleted     = "PodCompleted"
	reasonContainersNotRdy = "ContainersNotReady"
	reasonNotInitialized   = "ContainersNotInitialized"
	reasonDeadlineExceeded = "DeadlineExceeded"
)

// container is what the node knows of one container of a pod.
type container struct {
	name, image string
	imageID     string
	waiting     *corev1.ContainerStateWaiting
	started     time.Time
	exited      bool
	code        int
	reason      string
	message     string
	finished    time.Time
}

// podView is the node's view of a pod, written into its status by apply.
type podView struct {
	uid            types.UID
	init, main     []container
	reason, detail string // why the pod failed as a whole (DeadlineExceeded)
}

func newPodView(pod *corev1.Pod) *podView {
	v := &podView{uid: pod.UID}
	for _, c := range pod.Spec.InitContainers {
		v.init = append(v.init, container{name: c.Name, image: c.Image, waiting: &corev1.ContainerStateWaiting{Reason: reasonPodInitializing}})
	}
	for _, c := range pod.Spec.Containers {
		v.main = append(v.main, container{name: c.Name, image: c.Image, waiting: &corev1.ContainerStateWaiting{Reason: reasonPodInitializing}})
	}
	return v
}

func (v *podView) initDone() bool {
	for _, c := range v.init {
		if !c.exited || c.code != 0 {
			return false
		}
	}
	return true
}

func (v *podView) phase() corev1.PodPhase {
	if v.reason != "" {
		return corev1.PodFailed
	}
	for _, c := range v.init {
		if c.exited && c.code != 0 {
			return corev1.PodFailed
		}
	}
	started, exited, failed := 0, 0, false
	for _, c := range v.main {
		if !c.started.IsZero() {
			started++
		}
		if c.exited {
			exited++
			failed = failed || c.code != 0
		}
	}
	switch {
	case len(v.main) > 0 && exited == len(v.main) && failed:
		return corev1.PodFailed
	case len(v.main) > 0 && exited == len(v.main):
		return corev1.PodSucceeded
	case started > 0:
		return corev1.PodRunning
	}
	return corev1.PodPending
}

// apply writes the view into pod's status, as a kubelet reports it.
func (v *podView) apply(pod *corev1.Pod) {
	pod.Status.HostIP = hostIP
	pod.Status.HostIPs = []corev1.HostIP{{IP: hostIP}}
	if pod.Status.StartTime == nil {
		now := metav1.Now()
		pod.Status.StartTime = &now
	}
	phase := v.phase()
	pod.Status.Phase = phase
	pod.Status.Reason, pod.Status.Message = v.reason, v.detail
	pod.Status.InitContainerStatuses = v.statuses(v.init, true)
	pod.Status.ContainerStatuses = v.statuses(v.main, false)
	setCondition(pod, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "")
	if v.initDone() {
		setCondition(pod, corev1.PodInitialized, corev1.ConditionTrue, "")
	} else {
		setCondition(pod, corev1.PodInitialized, corev1.ConditionFalse, reasonNotInitialized)
	}
	ready, reason := corev1.ConditionTrue, ""
	switch {
	case phase == corev1.PodSucceeded || phase == corev1.PodFailed:
		ready, reason = corev1.ConditionFalse, reasonPodCompleted
	case phase != corev1.PodRunning || !v.allRunning():
		ready, reason = corev1.ConditionFalse, reasonContainersNotRdy
	}
	setCondition(pod, corev1.ContainersReady, ready, reason)
	setCondition(pod, corev1.PodReady, ready, reason)
}

func (v *podView) allRunning() bool {
	for _, c := range v.main {
		if c.started.IsZero() || c.exited {
			return false
		}
	}
	return true
}

func (v *podView) statuses(cs []container, init bool) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, 0, len(cs))
	for _, c := range cs {
		s := corev1.ContainerStatus{Name: c.name, Image: c.image, Started: ptr.To(false)}
		switch {
		case c.exited:
			s.State.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: int32(c.code), Reason: c.reason, Message: c.message,
				StartedAt: metav1.NewTime(c.started), FinishedAt: metav1.NewTime(c.finished),
				ContainerID: containerID(v.uid, c.name),
			}
			s.Ready = init && c.code == 0
		case !c.started.IsZero():
			s.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.started)}
			s.Ready, s.Started = !init, ptr.To(true)
		default:
			s.State.Waiting = c.waiting.DeepCopy()
		}
		if !c.started.IsZero() {
			s.ImageID, s.ContainerID = c.imageID, containerID(v.uid, c.name)
		}
		out = append(out, s)
	}
	return out
}

// updateStatus changes the status of the pod with uid, retrying conflicts
// with the Job controller's writes. A pod that is gone (or replaced by one
// of the same name) is a NotFound error.
func updateStatus(ctx context.Context, cs kubernetes.Interface, ns, name string, uid types.UID, change func(*corev1.Pod)) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.UID != uid {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
		}
		change(pod)
		pod.Status.ObservedGeneration = pod.Generation
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
}

// setCondition sets one pod condition, keeping its transition time when
// the status does not change.
func setCondition(pod *corev1.Pod, t corev1.PodConditionType, status corev1.ConditionStatus, reason string) {
	c := corev1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: metav1.Now(), ObservedGeneration: pod.Generation}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			if pod.Status.Conditions[i].Status == status {
				c.LastTransitionTime = pod.Status.Conditions[i].LastTransitionTime
			}
			pod.Status.Conditions[i] = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}

// containerID is a stable runtime ID of one container of the pod.
func containerID(uid types.UID, container string) string {
	sum := sha256.Sum256([]byte(string(uid) + "/" + container))
	return "captf-local://" + hex.EncodeToString(sum[:])
}

// message is the termination message a kubelet reports from the file the
// container wrote, cut to 4096 bytes; with FallbackToLogsOnError, a failed
// container that wrote none reports the tail of its log.
func message(c *corev1.Container, written []byte, code int, log string) string {
	if len(written) == 0 && code != 0 && c.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError {
		written = []byte(log)
		if len(written) > 2048 {
			written = written[len(written)-2048:]
		}
	}
	if len(written) > maxMessageBytes {
		written = written[:maxMessageBytes]
	}
	return string(written)
}
