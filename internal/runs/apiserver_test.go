package runs

import (
	"errors"
	"os"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/test/envtest"
)

// env is the real API server the runs are written to.
var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

// keeper writes through the test's API server.
func keeper() Keeper { return Keeper{Client: env.Client, Reader: env.Client} }

// suspendedJob is a Job that never runs (no kubelet here), with
// annotations.
func suspendedJob(ns, name string, labels, annotations map[string]string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "runner"}}}}},
	}
}

// perRunSecret is the per-run Secret of the Job name, holding data.
func perRunSecret(ns, name string, data []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobs.PerRunSecretName(name)}, Data: map[string][]byte{"main.tf.json": data}}
}

// TestCreate: a Job is created, then its per-run Secret owned by it; a
// Job of the same name is adopted and keeps its own Secret; a Secret an
// older Job of the name left is replaced; a Secret the API server refuses
// is said to be the per-run Secret's, with the Job left in place.
func TestCreate(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns := envtest.Namespace(t, env.Client, "runs-create")
	k := keeper()
	secretOf := func(job *batchv1.Job) *corev1.Secret {
		t.Helper()
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobs.PerRunSecretName(job.Name)}, s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	first := suspendedJob(ns, "first", nil, nil)
	if created, err := k.Create(ctx, first, perRunSecret(ns, "first", []byte("one"))); err != nil || !created {
		t.Fatalf("Create = %t, %v; want the Job created", created, err)
	}
	if s := secretOf(first); !metav1.IsControlledBy(s, first) || string(s.Data["main.tf.json"]) != "one" {
		t.Errorf("the per-run Secret is owned by %v and holds %q; want its Job's, holding its inputs", s.OwnerReferences, s.Data["main.tf.json"])
	}
	again := suspendedJob(ns, "first", nil, nil)
	if created, err := k.Create(ctx, again, perRunSecret(ns, "first", []byte("two"))); err != nil || created {
		t.Fatalf("Create of an existing Job = %t, %v; want it adopted", created, err)
	}
	if again.UID != first.UID || string(secretOf(first).Data["main.tf.json"]) != "one" {
		t.Errorf("the adopted Job has UID %s (want %s) and its Secret %q (want its own, %q)", again.UID, first.UID, secretOf(first).Data["main.tf.json"], "one")
	}

	// A Secret left by an older Job of the name (the Job was deleted, its
	// Secret not yet collected) is replaced.
	stale := perRunSecret(ns, "second", []byte("stale"))
	stale.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "second", UID: "0b8d5c1e-0000-4000-8000-000000000009", Controller: ptr.To(true)}}
	if err := env.Client.Create(ctx, stale); err != nil {
		t.Fatal(err)
	}
	second := suspendedJob(ns, "second", nil, nil)
	if _, err := k.Create(ctx, second, perRunSecret(ns, "second", []byte("fresh"))); err != nil {
		t.Fatal(err)
	}
	if s := secretOf(second); !metav1.IsControlledBy(s, second) || string(s.Data["main.tf.json"]) != "fresh" {
		t.Errorf("the stale Secret was not replaced: owned by %v, holding %q", s.OwnerReferences, s.Data["main.tf.json"])
	}

	// Over the API server's size limit, the Secret is refused.
	third := suspendedJob(ns, "third", nil, nil)
	created, err := k.Create(ctx, third, perRunSecret(ns, "third", []byte(strings.Repeat("x", 1<<20+1))))
	if !created || !errors.Is(err, ErrPerRunSecret) {
		t.Fatalf("Create with a refused Secret = %t, %v; want the Job created and the error marked as the per-run Secret's", created, err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(third), &batchv1.Job{}); err != nil {
		t.Errorf("the Job of the refused Secret: %v; want it left in place", err)
	}

	// A Job the API server refuses is not the per-run Secret's fault.
	invalid := suspendedJob(ns, "fourth", nil, nil)
	invalid.Spec.Template.Spec.Containers = nil
	created, err = k.Create(ctx, invalid, perRunSecret(ns, "fourth", []byte("x")))
	if created || !apierrors.IsInvalid(err) || errors.Is(err, ErrPerRunSecret) {
		t.Errorf("Create of an invalid Job = %t, %v; want it not created, the Job's own refusal, not marked as the Secret's", created, err)
	}
}

// TestStopAndDelete: a stopped Job gets a deadline of one second and the
// marks that tell bookkeeping why; DeleteUnowned deletes the Jobs without
// an owner reference and spares the owned ones; deleting a Job or a
// per-run Secret that is gone is not an error.
func TestStopAndDelete(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns := envtest.Namespace(t, env.Client, "runs-stop")
	k := keeper()
	create := func(j *batchv1.Job) *batchv1.Job {
		t.Helper()
		if err := env.Client.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	stopped := create(suspendedJob(ns, "stopped", nil, nil))
	if err := k.Stop(ctx, stopped, true); err != nil {
		t.Fatal(err)
	}
	got := &batchv1.Job{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(stopped), got); err != nil {
		t.Fatal(err)
	}
	if d := got.Spec.ActiveDeadlineSeconds; d == nil || *d != 1 || got.Annotations[infrav1.ImagePullFailedAnnotation] != "true" || got.Annotations[infrav1.RunnerImagePullFailedAnnotation] != "true" {
		t.Errorf("the stopped Job has deadline %v and annotations %v; want 1 s and both image-pull marks", d, got.Annotations)
	}
	module := create(suspendedJob(ns, "module", nil, nil))
	if err := k.Stop(ctx, module, false); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(module), got); err != nil {
		t.Fatal(err)
	}
	if _, runner := got.Annotations[infrav1.RunnerImagePullFailedAnnotation]; runner || got.Annotations[infrav1.ImagePullFailedAnnotation] != "true" {
		t.Errorf("a Job stopped for its module image has annotations %v; want the image-pull mark and not the runner's", got.Annotations)
	}

	owner := create(suspendedJob(ns, "owner", nil, nil))
	owned := suspendedJob(ns, "owned", nil, nil)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	create(owned)
	unowned := create(suspendedJob(ns, "unowned", nil, nil))
	if err := k.DeleteUnowned(ctx, []batchv1.Job{*owned, *unowned}); err != nil {
		t.Fatal(err)
	}
	if isGone(t, owned) || !isGone(t, unowned) {
		t.Errorf("after DeleteUnowned: owned gone %t, unowned gone %t; want only the unowned one gone", isGone(t, owned), isGone(t, unowned))
	}
	if err := k.Delete(ctx, unowned); err != nil {
		t.Errorf("deleting a deleted Job: %v", err)
	}
	if err := k.DeletePerRunSecret(ctx, unowned); err != nil {
		t.Errorf("deleting a per-run Secret that never was: %v", err)
	}
}

// isGone: j is deleted (or being deleted: its deletion may linger).
func isGone(t *testing.T, j *batchv1.Job) bool {
	t.Helper()
	got := &batchv1.Job{}
	err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(j), got)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err != nil || !got.DeletionTimestamp.IsZero()
}
