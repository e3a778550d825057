package jobs

import (
	"context"
	"os"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

// TestAPIServerAcceptsJobs creates every built Job and its per-run Secret
// in the real API server, which validates the pod template in full.
// No controller runs: the Jobs start no pods and the owners need not exist.
func TestAPIServerAcceptsJobs(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, ns) })

	for _, tc := range buildCases() {
		t.Run(tc.name, func(t *testing.T) {
			job, secret := mustBuild(t, tc.spec)
			if err := env.Client.Create(ctx, job); err != nil {
				t.Fatalf("the API server rejects the Job: %v", err)
			}
			if err := OwnPerRunSecret(secret, job); err != nil {
				t.Fatal(err)
			}
			secret.Data = map[string][]byte{"main.tf.json": []byte("{}"), "terraform.tfvars.json": []byte("{}")}
			if err := env.Client.Create(ctx, secret); err != nil {
				t.Fatalf("the API server rejects the per-run Secret: %v", err)
			}

			var got batchv1.Job
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), &got); err != nil {
				t.Fatal(err)
			}
			pod := got.Spec.Template.Spec
			expect(t, "stored args", pod.Containers[0].Args, job.Spec.Template.Spec.Containers[0].Args)
			expect(t, "stored env", pod.Containers[0].Env, job.Spec.Template.Spec.Containers[0].Env)
			expect(t, "backoffLimit", *got.Spec.BackoffLimit, int32(0))
			expect(t, "no TTL", got.Spec.TTLSecondsAfterFinished, (*int32)(nil))
			expect(t, "termination message policy", pod.Containers[0].TerminationMessagePolicy, corev1.TerminationMessageReadFile)
		})
	}
}
