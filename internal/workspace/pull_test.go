package workspace

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestRunnerImagePullIsReported: a Job whose runner init container cannot
// pull the runner image (a wrong --runner-image, a missing pull secret)
// never starts its module container. It is reported at once, naming the
// runner image and what to fix, and stopped after the grace; it never
// falls back to another module image (the fallback list is the module's).
// It was reported nowhere until the Job's deadline.
func TestRunnerImagePullIsReported(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	const ns, runnerImage = "runner-pull", "example.test/captf-manager:gone"
	obj := newCluster(t, ns, "c")
	podSpec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		InitContainers: []corev1.Container{{Name: jobs.RunnerContainer, Image: runnerImage}},
		Containers:     []corev1.Container{{Name: jobs.SourceContainer, Image: "example.test/cluster@sha256:" + strings.Repeat("a", 64)}}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "captf-c-c-destroy-a1-0a1b2c",
		Labels:      map[string]string{infrav1.OperationLabel: "destroy", infrav1.AttemptLabel: "1"},
		Annotations: map[string]string{infrav1.ImageFallbacksAnnotation: "example.test/cluster:1"}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: podSpec}}}
	if err := env.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name + "-x1", Labels: map[string]string{batchv1.JobNameLabel: job.Name}}, Spec: podSpec}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "Back-off pulling image"}}
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending,
		InitContainerStatuses: []corev1.ContainerStatus{{Name: jobs.RunnerContainer, Image: runnerImage, State: waiting("ImagePullBackOff")}},
		ContainerStatuses:     []corev1.ContainerStatus{{Name: jobs.SourceContainer, State: waiting("PodInitializing")}}}
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	e := &Engine{Client: env.Client, APIReader: env.Client}
	check := func(after time.Duration) *pass {
		t.Helper()
		p := &pass{e: e, role: role, obj: obj, w: role.View(obj), before: obj.DeepCopy(), now: job.CreationTimestamp.Add(after)}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			t.Fatal(err)
		}
		p.active = job
		if err := p.checkActive(ctx); err != nil {
			t.Fatal(err)
		}
		doJobChores(t, p)
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			t.Fatalf("the Job is gone (%v): a runner image must not fall back", err)
		}
		return p
	}

	p := check(30 * time.Second)
	c := meta.FindStatusCondition(p.conds, infrav1.ApplyJobSucceededCondition)
	if c == nil || c.Reason != infrav1.ImagePullFailedReason || !strings.Contains(c.Message, "cannot pull runner image "+runnerImage) {
		t.Fatalf("within the grace the pass reports %+v, want ApplyJobSucceeded ImagePullFailed naming the runner image", c)
	}
	if job.Annotations[infrav1.ImagePullFailedAnnotation] != "" || job.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("within the grace the Job was stopped: %v, deadline %v", job.Annotations, job.Spec.ActiveDeadlineSeconds)
	}

	check(ImagePullGrace + time.Second)
	if job.Annotations[infrav1.ImagePullFailedAnnotation] != "true" || job.Annotations[infrav1.RunnerImagePullFailedAnnotation] != "true" ||
		ptr.Deref(job.Spec.ActiveDeadlineSeconds, 0) != 1 {
		t.Fatalf("after the grace the Job has annotations %v and deadline %v, want it stopped as a runner image pull failure",
			job.Annotations, job.Spec.ActiveDeadlineSeconds)
	}
	// Once it failed, its report names the runner image, not the module's.
	failed, _ := conditions.Job(jobs.Outcome{Job: job, Op: jobs.Op(job)}.Facts(""))
	if !strings.Contains(failed.Message, "the runner image "+runnerImage+" could not be pulled") {
		t.Errorf("the failed Job reports %q, want the runner image named", failed.Message)
	}
}
