package kubelet_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// env runs etcd, kube-apiserver and kube-controller-manager: the Job
// controller creates the pods the kubelet runs and finishes the Jobs.
var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{ControllerManager: true}))
}

// An apply Job built by jobs.Build runs for real on the kubelet: the Job
// completes, the pod's termination message is the runner's result, and
// the state lands in the namespace's state Secret.
func TestApplyJobCompletes(t *testing.T) {
	k := kubelet.Start(t, env, kubelet.ExampleImages(t))
	for _, rt := range kubelet.Runtimes {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			image := kubelet.ExampleImage("noop-cluster", rt)
			credentials(t, ns)
			job := start(t, clusterRun(t, ns, image))

			if got := waitJobFinished(t, job); got != batchv1.JobComplete {
				t.Fatalf("the Job finished %s, want Complete", got)
			}
			pod := waitPod(t, job, "succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
			if pod.Spec.NodeName != k.NodeName() {
				t.Errorf("the pod runs on node %q, want the kubelet's %q", pod.Spec.NodeName, k.NodeName())
			}
			st := sourceStatus(pod)
			if !strings.HasPrefix(st.ImageID, "local/noop-cluster@sha256:") || len(st.ImageID) != len("local/noop-cluster@sha256:")+64 {
				t.Errorf("image ID %q is not a digest of local/noop-cluster", st.ImageID)
			}
			res := wantResult(t, st)
			if res.Op != runner.OpApply || res.Error != nil || res.Image.Ref != image || !res.Image.ProvidersMirror || res.Runtime.Version == "" {
				t.Errorf("result: op %q, error %+v, image %+v, runtime %+v; want a successful apply of %s with the mirror",
					res.Op, res.Error, res.Image, res.Runtime, image)
			}

			suffix, err := state.Suffix(ns, "TerraformCluster", "demo")
			if err != nil {
				t.Fatal(err)
			}
			var secret corev1.Secret
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "tfstate-default-" + suffix}, &secret); err != nil {
				t.Fatalf("the state Secret: %v", err)
			}
			cs := kubernetes.NewForConfigOrDie(env.Config)
			got, err := state.Read(t.Context(), state.ClientsetLister(cs.CoreV1()), ns, suffix)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := got.Outputs["control_plane_endpoint"]; !ok || got.ManagedResources == 0 {
				t.Errorf("the state has outputs %v and %d resources; want control_plane_endpoint and resources", keys(got.Outputs), got.ManagedResources)
			}
			if !hasRunnerEvent(t, ns, runner.EventRunFinished) {
				t.Errorf("the runner posted no %s event through the test API server", runner.EventRunFinished)
			}
			run := runOf(t, k, pod.Name)
			if run.Op != runner.OpApply || run.ExitCode != 0 || run.Stopped || run.Job != job.Name {
				t.Errorf("the kubelet recorded %+v", run)
			}
			t.Logf("%s: the runner ran %s; Job created to Complete in %s",
				rt, run.Finished.Sub(run.Started).Round(time.Millisecond), time.Since(job.CreationTimestamp.Time).Round(time.Second))
		})
	}
}

// A module that does not parse fails its Job the way a real one does: the
// pod Failed, the container terminated in Error with the failure in the
// result document.
func TestBrokenModuleFailsTheJob(t *testing.T) {
	images := kubelet.ExampleImages(t)
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "main.tf"), []byte("resource \"null_resource\" {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	images["local/broken:tofu"] = kubelet.Image{ModuleDir: broken, Runtime: "tofu"}
	k := kubelet.Start(t, env, images)
	ns := namespace(t)
	credentials(t, ns)
	job := start(t, clusterRun(t, ns, "local/broken:tofu"))

	if got := waitJobFinished(t, job); got != batchv1.JobFailed {
		t.Fatalf("the Job finished %s, want Failed", got)
	}
	pod := waitPod(t, job, "failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	st := sourceStatus(pod)
	res := wantResult(t, st)
	if term := st.State.Terminated; term.ExitCode != runner.ExitFailure || term.Reason != "Error" {
		t.Errorf("the container terminated with %d %s, want 1 Error", term.ExitCode, term.Reason)
	}
	if res.Error == nil || res.Error.Kind != runner.KindStep || res.Error.Tail == "" {
		t.Errorf("the result reports %+v, want a failed step with its summary", res.Error)
	}
	if strings.Contains(res.Error.Tail, "kubelet-") || strings.Contains(strings.Join(res.Runtime.Command, " "), "kubelet-") {
		t.Errorf("the result names paths outside the container: %+v, %q", res.Runtime, res.Error.Tail)
	}
	if run := runOf(t, k, pod.Name); run.ExitCode != runner.ExitFailure || run.Message != st.State.Terminated.Message {
		t.Errorf("the kubelet recorded exit %d and message %q", run.ExitCode, run.Message)
	}
}

// An image the kubelet does not have leaves the pod Pending in
// ErrImagePull and runs nothing; deleting the Job then deletes the pod.
func TestUnknownImageWaitsInErrImagePull(t *testing.T) {
	k := kubelet.Start(t, env, kubelet.ExampleImages(t))
	ns := namespace(t)
	credentials(t, ns)
	job := start(t, clusterRun(t, ns, "local/missing:tofu"))

	pod := waitPod(t, job, "in ErrImagePull", func(p *corev1.Pod) bool {
		w := sourceStatus(p).State.Waiting
		return w != nil && w.Reason == "ErrImagePull"
	})
	if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != k.NodeName() {
		t.Errorf("the pod is %s on node %q; want Pending on %q", pod.Status.Phase, pod.Spec.NodeName, k.NodeName())
	}
	if msg := sourceStatus(pod).State.Waiting.Message; !strings.Contains(msg, `"local/missing:tofu"`) {
		t.Errorf("the waiting message %q does not name the image", msg)
	}
	time.Sleep(time.Second) // nothing may run meanwhile
	if runs := k.Runs(); len(runs) != 0 {
		t.Errorf("the kubelet ran %+v", runs)
	}

	if err := env.Client.Delete(t.Context(), job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pod)
}

// A pod whose credentials Secret does not exist yet waits, as with a
// kubelet that cannot mount it, and runs once the Secret appears.
func TestPodWaitsForItsSecrets(t *testing.T) {
	k := kubelet.Start(t, env, kubelet.ExampleImages(t))
	ns := namespace(t)
	job := start(t, clusterRun(t, ns, kubelet.ExampleImage("noop-cluster", "tofu")))

	pod := waitPod(t, job, "waiting for its volumes", func(p *corev1.Pod) bool {
		w := sourceStatus(p).State.Waiting
		return w != nil && w.Reason == "PodInitializing" && strings.Contains(w.Message, `"noop-creds" not found`)
	})
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("the pod is %s, want Pending", pod.Status.Phase)
	}
	if runs := k.Runs(); len(runs) != 0 {
		t.Errorf("the kubelet ran %+v before the Secret existed", runs)
	}
	credentials(t, ns)
	if got := waitJobFinished(t, job); got != batchv1.JobComplete {
		t.Fatalf("the Job finished %s, want Complete", got)
	}
	if run := runOf(t, k, pod.Name); run.ExitCode != 0 {
		t.Errorf("the run exited %d: %+v", run.ExitCode, run.Result.Error)
	}
}

// Deleting a Job while its apply runs stops the runner as SIGTERM would:
// the run reports an interruption, the state is kept, the lock released,
// and the pod's deletion completes.
func TestDeletingTheJobStopsTheRun(t *testing.T) {
	k := kubelet.Start(t, env, kubelet.ExampleImages(t))
	ns := namespace(t)
	r := machineRun(t, ns, kubelet.ExampleImage("slow", "tofu"))
	job := start(t, r)
	suffix, err := state.Suffix(ns, "TerraformMachine", r.spec.ObjectName)
	if err != nil {
		t.Fatal(err)
	}
	pod := waitPod(t, job, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	// The apply holds the state lock while it runs.
	waitLock(t, pod, suffix, true)

	if err := env.Client.Delete(t.Context(), job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pod)
	run := runOf(t, k, pod.Name)
	if !run.Stopped || run.ExitCode != runner.ExitFailure || run.Result.Error == nil || run.Result.Error.Kind != runner.KindInterrupted {
		t.Fatalf("the run was not interrupted: stopped %v, exit %d, error %+v", run.Stopped, run.ExitCode, run.Result.Error)
	}
	if !json.Valid([]byte(run.Message)) {
		t.Errorf("the termination message is not the result document: %q", run.Message)
	}
	waitLock(t, pod, suffix, false)
	t.Logf("stopped after %s", run.Finished.Sub(run.Started).Round(time.Millisecond))
}

// A Job past its activeDeadlineSeconds has its running pod deleted by the
// Job controller; the run is stopped and the Job fails DeadlineExceeded.
func TestActiveDeadlineStopsTheRun(t *testing.T) {
	k := kubelet.Start(t, env, kubelet.ExampleImages(t))
	ns := namespace(t)
	r := machineRun(t, ns, kubelet.ExampleImage("slow", "terraform"))
	r.spec.Policy.ActiveDeadlineSeconds = 5
	job := start(t, r)
	pod := waitPod(t, job, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	if got := waitJobFinished(t, job); got != batchv1.JobFailed {
		t.Fatalf("the Job finished %s, want Failed", got)
	}
	var got batchv1.Job
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(job), &got); err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Reason != batchv1.JobReasonDeadlineExceeded {
			t.Errorf("the Job failed for %s, want %s", c.Reason, batchv1.JobReasonDeadlineExceeded)
		}
	}
	waitGone(t, pod)
	run := runOf(t, k, pod.Name)
	if !run.Stopped || run.Result.Error == nil || run.Result.Error.Kind != runner.KindInterrupted {
		t.Errorf("the run was not interrupted: stopped %v, exit %d, error %+v", run.Stopped, run.ExitCode, run.Result.Error)
	}
}

// wantResult decodes the termination message of a terminated container.
func wantResult(t *testing.T, st corev1.ContainerStatus) runner.Result {
	t.Helper()
	term := st.State.Terminated
	if term == nil {
		t.Fatalf("the container is not terminated: %+v", st.State)
	}
	var res runner.Result
	if len(term.Message) > runner.MaxResultBytes || json.Unmarshal([]byte(term.Message), &res) != nil || res.Version != runner.ResultVersion {
		t.Fatalf("the termination message is not a result document (%d bytes): %q", len(term.Message), term.Message)
	}
	return res
}

// runOf finds the kubelet's record of a pod's run.
func runOf(t *testing.T, k *kubelet.Kubelet, pod string) kubelet.Run {
	t.Helper()
	for _, r := range k.Runs() {
		if r.Pod == pod {
			return r
		}
	}
	t.Fatalf("the kubelet has no run of pod %s", pod)
	return kubelet.Run{}
}

// waitLock waits until the state lock is held, or free. Waiting for it
// to be held gives up once the pod ended.
func waitLock(t *testing.T, pod *corev1.Pod, suffix string, held bool) {
	t.Helper()
	ns := pod.Namespace
	deadline := time.Now().Add(jobTimeout)
	for time.Now().Before(deadline) {
		var p corev1.Pod
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(pod), &p); held && err == nil &&
			(p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
			t.Fatalf("the pod ended (%s) before the state lock was seen held: %+v", p.Status.Phase, sourceStatus(&p).State.Terminated)
		}
		var lease coordinationv1.Lease
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: state.LockLeaseName(suffix)}, &lease)
		h := lease.Spec.HolderIdentity
		if isHeld := err == nil && h != nil && *h != ""; isHeld == held {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the state lock never became held=%v", held)
}

func hasRunnerEvent(t *testing.T, ns, reason string) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Reason == reason && e.ReportingController == runner.ReportingController {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
