package kubelet

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

// Container state reasons a kubelet reports.
const (
	reasonErrImagePull     = "ErrImagePull"
	reasonPodInitializing  = "PodInitializing"
	reasonConfigError      = "CreateContainerConfigError"
	reasonCreateError      = "CreateContainerError"
	reasonCompleted        = "Completed"
	reasonError            = "Error"
	reasonPodCompleted     = "PodCompleted"
	reasonContainersNotRdy = "ContainersNotReady"
)

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

// onNode fills what a kubelet reports as soon as it handles a pod.
func onNode(pod *corev1.Pod) {
	pod.Status.HostIP = hostIP
	pod.Status.HostIPs = []corev1.HostIP{{IP: hostIP}}
	if pod.Status.StartTime == nil {
		now := metav1.Now()
		pod.Status.StartTime = &now
	}
	setCondition(pod, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "")
}

// pending leaves the pod Pending with every container waiting for reason;
// initDone says whether the init containers have completed.
func pending(pod *corev1.Pod, initDone bool, reason, message string) {
	onNode(pod)
	pod.Status.Phase = corev1.PodPending
	if initDone {
		initCompleted(pod)
	} else {
		pod.Status.InitContainerStatuses = statuses(pod.Spec.InitContainers, func(*corev1.ContainerStatus) {}, waitingState(reasonPodInitializing, ""))
		setCondition(pod, corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized")
	}
	pod.Status.ContainerStatuses = statuses(pod.Spec.Containers, func(*corev1.ContainerStatus) {}, waitingState(reason, message))
	setCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, reasonContainersNotRdy)
	setCondition(pod, corev1.PodReady, corev1.ConditionFalse, reasonContainersNotRdy)
}

// running reports the init containers completed and every container
// running since started.
func running(pod *corev1.Pod, started time.Time, imageIDs map[string]string) {
	onNode(pod)
	pod.Status.Phase = corev1.PodRunning
	initCompleted(pod)
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}
	pod.Status.ContainerStatuses = statuses(pod.Spec.Containers, func(s *corev1.ContainerStatus) {
		s.Ready, s.Started, s.ImageID = true, ptr.To(true), imageIDs[s.Name]
		s.ContainerID = containerID(pod, s.Name)
	}, state)
	setCondition(pod, corev1.ContainersReady, corev1.ConditionTrue, "")
	setCondition(pod, corev1.PodReady, corev1.ConditionTrue, "")
}

// terminated reports the pod's end: the container named name exited with
// code and message; Succeeded for 0, Failed otherwise.
func terminated(pod *corev1.Pod, name string, started time.Time, code int, message string, imageIDs map[string]string) {
	onNode(pod)
	pod.Status.Phase = corev1.PodSucceeded
	reason := reasonCompleted
	if code != 0 {
		pod.Status.Phase, reason = corev1.PodFailed, reasonError
	}
	initCompleted(pod)
	state := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: int32(code), Reason: reason, Message: message,
		StartedAt: metav1.NewTime(started), FinishedAt: metav1.Now(),
	}}
	pod.Status.ContainerStatuses = statuses(pod.Spec.Containers, func(s *corev1.ContainerStatus) {
		s.ImageID, s.ContainerID, s.Started = imageIDs[s.Name], containerID(pod, s.Name), ptr.To(false)
		if s.Name != name {
			s.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: reasonError,
				StartedAt: metav1.NewTime(started), FinishedAt: metav1.Now()}
		}
	}, state)
	setCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, reasonPodCompleted)
	setCondition(pod, corev1.PodReady, corev1.ConditionFalse, reasonPodCompleted)
}

// initCompleted reports every init container as having exited 0.
func initCompleted(pod *corev1.Pod) {
	start := metav1.Now()
	if pod.Status.StartTime != nil {
		start = *pod.Status.StartTime
	}
	state := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		Reason: reasonCompleted, StartedAt: start, FinishedAt: start,
	}}
	pod.Status.InitContainerStatuses = statuses(pod.Spec.InitContainers, func(s *corev1.ContainerStatus) {
		s.Ready, s.Started = true, ptr.To(false)
		s.ImageID, s.ContainerID = refDigest(s.Image), containerID(pod, s.Name)
	}, state)
	setCondition(pod, corev1.PodInitialized, corev1.ConditionTrue, "")
}

// statuses builds one status per container in state, then lets set adjust
// each.
func statuses(containers []corev1.Container, set func(*corev1.ContainerStatus), state corev1.ContainerState) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, 0, len(containers))
	for _, c := range containers {
		s := corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: *state.DeepCopy(), Started: ptr.To(false)}
		set(&s)
		out = append(out, s)
	}
	return out
}

func waitingState(reason, message string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
}

// containerID is a stable fake runtime ID of one container of the pod.
func containerID(pod *corev1.Pod, container string) string {
	sum := sha256.Sum256([]byte(string(pod.UID) + "/" + container))
	return "captf-test://" + hex.EncodeToString(sum[:])
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
