package localnode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func twoContainerPod() *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "runner", Image: "local/r:dev"}},
		Containers:     []corev1.Container{{Name: "source", Image: "local/m:tofu"}},
	}}
}

// The pod's phase, conditions and container states follow its containers
// as a kubelet reports them.
func TestPodViewApply(t *testing.T) {
	at := time.Unix(1700000000, 0)
	exited := func(code int) container {
		return container{started: at, exited: true, code: code, reason: reasonCompleted, finished: at}
	}
	runningC := container{started: at}
	waiting := func(reason string) container {
		return container{waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "m"}}
	}
	testCases := []struct {
		name        string
		init, main  container
		podReason   string
		phase       corev1.PodPhase
		initialized corev1.ConditionStatus
		ready       corev1.ConditionStatus
		readyReason string
		mainState   string
	}{
		{"volumes pending", waiting(reasonPodInitializing), waiting(reasonPodInitializing), "", corev1.PodPending, corev1.ConditionFalse, corev1.ConditionFalse, reasonContainersNotRdy, "waiting"},
		{"init runs", runningC, waiting(reasonPodInitializing), "", corev1.PodPending, corev1.ConditionFalse, corev1.ConditionFalse, reasonContainersNotRdy, "waiting"},
		{"image missing", exited(0), waiting(reasonErrImagePull), "", corev1.PodPending, corev1.ConditionTrue, corev1.ConditionFalse, reasonContainersNotRdy, "waiting"},
		{"running", exited(0), runningC, "", corev1.PodRunning, corev1.ConditionTrue, corev1.ConditionTrue, "", "running"},
		{"succeeded", exited(0), exited(0), "", corev1.PodSucceeded, corev1.ConditionTrue, corev1.ConditionFalse, reasonPodCompleted, "terminated"},
		{"failed", exited(0), exited(1), "", corev1.PodFailed, corev1.ConditionTrue, corev1.ConditionFalse, reasonPodCompleted, "terminated"},
		{"init failed", exited(1), waiting(reasonPodInitializing), "", corev1.PodFailed, corev1.ConditionFalse, corev1.ConditionFalse, reasonPodCompleted, "waiting"},
		{"deadline", exited(0), exited(143), reasonDeadlineExceeded, corev1.PodFailed, corev1.ConditionTrue, corev1.ConditionFalse, reasonPodCompleted, "terminated"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			pod := twoContainerPod()
			v := newPodView(pod)
			v.init[0], v.main[0] = tc.init, tc.main
			v.init[0].name, v.main[0].name = "runner", "source"
			v.reason = tc.podReason
			v.apply(pod)
			if pod.Status.Phase != tc.phase || pod.Status.Reason != tc.podReason {
				t.Errorf("phase %s (%q), want %s (%q)", pod.Status.Phase, pod.Status.Reason, tc.phase, tc.podReason)
			}
			for _, c := range pod.Status.Conditions {
				switch c.Type {
				case corev1.PodInitialized:
					if c.Status != tc.initialized {
						t.Errorf("Initialized %s, want %s", c.Status, tc.initialized)
					}
				case corev1.PodReady, corev1.ContainersReady:
					if c.Status != tc.ready || c.Reason != tc.readyReason {
						t.Errorf("%s %s %s, want %s %s", c.Type, c.Status, c.Reason, tc.ready, tc.readyReason)
					}
				}
			}
			s := pod.Status.ContainerStatuses[0].State
			got := map[bool]string{s.Waiting != nil: "waiting", s.Running != nil: "running", s.Terminated != nil: "terminated"}[true]
			if got != tc.mainState {
				t.Errorf("the container is %s, want %s", got, tc.mainState)
			}
			if s.Terminated != nil && s.Terminated.ExitCode != int32(tc.main.code) {
				t.Errorf("exit code %d, want %d", s.Terminated.ExitCode, tc.main.code)
			}
		})
	}
}

func TestServicePort(t *testing.T) {
	for in, want := range map[string][2]string{
		"https://127.0.0.1:38017":     {"127.0.0.1", "38017"},
		"https://api.example.com":     {"api.example.com", "443"},
		"https://[::1]:6443/prefix/x": {"::1", "6443"},
	} {
		host, port, ok := servicePort(in)
		if !ok || host != want[0] || port != want[1] {
			t.Errorf("servicePort(%q) = %q, %q, %v; want %v", in, host, port, ok, want)
		}
	}
	if _, _, ok := servicePort("::bad"); ok {
		t.Error("servicePort accepted a bad URL")
	}
}

// A pod's log is found by its name, or by its Job's name (the newest pod),
// and its default container is its first.
func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	write := func(pod, container, text string, first bool) {
		f, err := openLog(dir, "ns", pod, container)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.WriteString(text)
		_ = f.Close()
		if first {
			if err := os.WriteFile(filepath.Join(podLogDir(dir, "ns", pod), defaultFile), []byte(container), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("job-a-old", "source", "old run\n", true)
	time.Sleep(10 * time.Millisecond)
	write("job-a-new", "runner", "copied\n", false)
	write("job-a-new", "source", "new run\n", true)
	testCases := []struct{ pod, container, want string }{
		{"job-a-old", "", "old run\n"},
		{"job-a-new", "runner", "copied\n"},
		{"job-a", "", "new run\n"},
	}
	for _, tc := range testCases {
		got, err := ReadLog(dir, "ns", tc.pod, tc.container)
		if err != nil || string(got) != tc.want {
			t.Errorf("ReadLog(%s, %q) = %q, %v; want %q", tc.pod, tc.container, got, err, tc.want)
		}
	}
	for _, bad := range []string{"job-b", "../ns", ""} {
		if _, err := ReadLog(dir, "ns", bad, ""); err == nil || !strings.Contains(err.Error(), "no log kept") {
			t.Errorf("ReadLog(%q) = %v, want ErrNoLog", bad, err)
		}
	}
}
