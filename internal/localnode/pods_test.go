package localnode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/localnode"
)

// probeScript prints what the container sees, one name=value per line,
// writes its termination message and exits 3.
const probeScript = `
echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"
echo "hostname=$(cat /proc/sys/kernel/hostname)"
echo "foo=$FOO baz=$BAZ key=$FROM_SECRET color=$CFG_color svc=$KUBERNETES_SERVICE_HOST"
echo "marker=$(cat /opt/probe/marker)"
echo "init=$(cat /shared/mark) initUid=$(cat /shared/init-uid)"
echo "credMode=$(stat -c %a /var/run/creds/token) credGroup=$(stat -c %g /var/run/creds/token) app=$(cat /etc/app/color)"
echo "saNamespace=$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace)"
if touch /not-a-volume 2>/dev/null; then echo rootfs=writable; else echo rootfs=readonly; fi
if touch /var/run/creds/x 2>/dev/null; then echo creds=writable; else echo creds=readonly; fi
printf 'the message' > /dev/termination-log
exit 3
`

// A pod runs exactly as its spec says: command and args, env (with $(VAR)
// expansion, Secret keys, ConfigMap envFrom with a prefix), Secret and
// ConfigMap volumes with their modes owned by fsGroup, an emptyDir shared
// by the init container and the container, users, the image's paths, a
// read-only root, the service account token, the hostname; its exit code
// and termination message come back in its status and its log is kept.
func TestPodSpecIsHonoured(t *testing.T) {
	n := startNode(t)
	ns := namespace(t, "probe")
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, Data: map[string][]byte{"token": []byte("s3cr3t")}})
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}, Data: map[string]string{"color": "blue"}})
	shared := corev1.VolumeMount{Name: "shared", MountPath: "/shared"}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, ServiceAccountName: "probe",
			SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000)},
			Volumes: []corev1.Volume{
				{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr.To[int32](0o440)}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			},
			InitContainers: []corev1.Container{{
				Name: "init", Image: shellImage, Command: []string{"/bin/sh", "-c", "echo init-was-here > /shared/mark; id -u > /shared/init-uid"},
				VolumeMounts:    []corev1.VolumeMount{shared},
				SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1001), RunAsNonRoot: ptr.To(true)},
			}},
			Containers: []corev1.Container{{
				Name: "main", Image: shellImage, Command: []string{"/bin/sh", "-c"}, Args: []string{probeScript},
				Env: []corev1.EnvVar{
					{Name: "FOO", Value: "bar"}, {Name: "BAZ", Value: "$(FOO)-x"},
					{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token"}}},
				},
				EnvFrom: []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
				VolumeMounts: []corev1.VolumeMount{shared,
					{Name: "creds", MountPath: "/var/run/creds", ReadOnly: true}, {Name: "cfg", MountPath: "/etc/app", ReadOnly: true}},
				SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000), ReadOnlyRootFilesystem: ptr.To(true)},
			}},
		},
	}
	create(t, pod)

	got := waitPod(t, client.ObjectKeyFromObject(pod), "finished", terminated)
	if got.Spec.NodeName != n.NodeName() || got.Status.Phase != corev1.PodFailed {
		t.Errorf("the pod is %s on %q; want Failed on %q", got.Status.Phase, got.Spec.NodeName, n.NodeName())
	}
	term := got.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 3 || term.Reason != "Error" || term.Message != "the message" {
		t.Fatalf("the container ended %+v; want exit 3, Error, the termination message", term)
	}
	if init := got.Status.InitContainerStatuses[0].State.Terminated; init == nil || init.ExitCode != 0 {
		t.Errorf("the init container ended %+v, want exit 0", init)
	}
	log, err := n.Logs(ns, "probe", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"uid=1000 gid=1000 groups=1000 2000", "hostname=probe",
		"foo=bar baz=bar-x key=s3cr3t color=blue svc=127.0.0.1", "marker=from the image",
		"init=init-was-here initUid=1001", "credMode=440 credGroup=2000 app=blue", "saNamespace=" + ns,
		"rootfs=readonly", "creds=readonly",
	} {
		if !strings.Contains(string(log), want+"\n") {
			t.Errorf("the container saw something else than %q:\n%s", want, log)
		}
	}
	if run := runOf(t, n, "probe"); run.ExitCode != 3 || run.Message != "the message" || run.Stopped {
		t.Errorf("the node recorded %+v", run)
	}
}

// shellPod is a pod of one shell container running script.
func shellPod(ns, name, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "main", Image: shellImage, Command: []string{"/bin/sh", "-c", script}}}},
	}
}

// Deleting a pod sends SIGTERM; a container that ignores it is killed
// once the grace period is over, and the deletion completes.
func TestDeletionIsSIGTERMThenSIGKILL(t *testing.T) {
	n := startNode(t)
	ns := namespace(t, "default")
	pod := shellPod(ns, "stubborn", `trap 'echo got TERM' TERM; echo started; while true; do sleep 0.1; done`)
	create(t, pod)
	waitPod(t, client.ObjectKeyFromObject(pod), "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	if err := env.Client.Delete(t.Context(), pod, client.GracePeriodSeconds(1)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pod)
	run := runOf(t, n, "stubborn")
	if !run.Stopped || run.ExitCode != 137 || !strings.Contains(run.Log, "got TERM") {
		t.Errorf("the container was not stopped then killed: stopped %v, exit %d, log %q", run.Stopped, run.ExitCode, run.Log)
	}
	if d := run.Finished.Sub(run.Started); d > 20e9 {
		t.Errorf("the kill took %s after a 1s grace", d)
	}
}

// A pod past its activeDeadlineSeconds is stopped and fails
// DeadlineExceeded.
func TestActiveDeadlineFailsThePod(t *testing.T) {
	startNode(t)
	ns := namespace(t, "default")
	pod := shellPod(ns, "slowpoke", "sleep 60")
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
	create(t, pod)

	got := waitPod(t, client.ObjectKeyFromObject(pod), "failed", terminated)
	term := got.Status.ContainerStatuses[0].State.Terminated
	if got.Status.Phase != corev1.PodFailed || got.Status.Reason != "DeadlineExceeded" || term == nil || term.ExitCode == 0 {
		t.Errorf("the pod is %s (%s), its container %+v; want Failed, DeadlineExceeded, a non-zero exit", got.Status.Phase, got.Status.Reason, term)
	}
}

// An image the node does not have leaves the pod Pending in ErrImagePull,
// naming the image, then in ImagePullBackOff until the next pull, as a
// kubelet does; an image pushed meanwhile is pulled then, and the pod
// runs.
func TestUnknownImageIsErrImagePull(t *testing.T) {
	n := startNodeWith(t, func(o *localnode.Options) { o.PullBackoff = 400 * time.Millisecond })
	ns := namespace(t, "default")
	pod := shellPod(ns, "nowhere", "true")
	const missing = "local/missing:tofu"
	pod.Spec.Containers[0].Image = missing
	create(t, pod)
	waiting := func(reason string) func(p *corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
				p.Status.ContainerStatuses[0].State.Waiting.Reason == reason
		}
	}
	got := waitPod(t, client.ObjectKeyFromObject(pod), "in ErrImagePull", waiting("ErrImagePull"))
	if got.Status.Phase != corev1.PodPending || !strings.Contains(got.Status.ContainerStatuses[0].State.Waiting.Message, `"`+missing+`"`) {
		t.Errorf("the pod is %s, waiting %+v", got.Status.Phase, got.Status.ContainerStatuses[0].State.Waiting)
	}
	got = waitPod(t, client.ObjectKeyFromObject(pod), "in ImagePullBackOff", waiting("ImagePullBackOff"))
	if got.Status.Phase != corev1.PodPending || !strings.Contains(got.Status.ContainerStatuses[0].State.Waiting.Message, `"`+missing+`"`) {
		t.Errorf("the pod is %s, waiting %+v", got.Status.Phase, got.Status.ContainerStatuses[0].State.Waiting)
	}
	marker := filepath.Join(t.TempDir(), "marker")
	if err := os.WriteFile(marker, []byte("pushed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := n.AddImage(missing, localnode.Image{Paths: map[string]string{markerPath: marker}}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, client.ObjectKeyFromObject(pod), "run once its image was pushed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
}

// With MaxPods, the node runs that many pods at once, as a kubelet does
// its maxPods: its Node says the capacity, the pod it has no room for
// stays Pending and unbound, and it is taken when a running one ends.
func TestMaxPodsLeavesTheRestPending(t *testing.T) {
	n := startNodeWith(t, func(o *localnode.Options) { o.MaxPods = 2 })
	node := &corev1.Node{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: n.NodeName()}, node); err != nil {
		t.Fatal(err)
	}
	if got := node.Status.Capacity.Pods().Value(); got != 2 {
		t.Errorf("the Node's pod capacity is %d, want 2", got)
	}
	ns := namespace(t, "default")
	var pods []*corev1.Pod
	for _, name := range []string{"first", "second", "third"} {
		pod := shellPod(ns, name, `while true; do sleep 0.1; done`)
		create(t, pod)
		pods = append(pods, pod)
	}
	running := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }
	for _, pod := range pods[:2] {
		waitPod(t, client.ObjectKeyFromObject(pod), "running", running)
	}
	third := &corev1.Pod{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(pods[2]), third); err != nil {
		t.Fatal(err)
	}
	if third.Spec.NodeName != "" || third.Status.Phase != corev1.PodPending {
		t.Fatalf("a third pod on a node of two places is bound to %q and %s", third.Spec.NodeName, third.Status.Phase)
	}
	if err := env.Client.Delete(t.Context(), pods[0], client.GracePeriodSeconds(1)); err != nil {
		t.Fatal(err)
	}
	waitPod(t, client.ObjectKeyFromObject(pods[2]), "running once the first one went", running)
}
