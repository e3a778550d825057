package workspace

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// TestSweepSparesTheJobsOfALiveObject: the orphan sweep runs when a pass
// found its object absent, but that read may be older than the Jobs the
// sweep lists: a pass woken by a Machine created just before its
// TerraformMachine finds no TerraformMachine, and by the time it lists,
// the TerraformMachine and a Job of it exist. Under load this deleted the
// Job of a live object. A Job naming the UID of the object that exists now
// is kept; one naming an earlier object of the same name, or an object
// that is gone, is deleted.
func TestSweepSparesTheJobsOfALiveObject(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	const ns = "sweep-live"
	live := newCluster(t, ns, "alive")
	job := func(name, object, uid string) *batchv1.Job {
		t.Helper()
		owner := state.OwnerLabels(role.Kind(), object, "")
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Labels: map[string]string{infrav1.ManagedLabel: "true", infrav1.OwnerKindLabel: owner[state.LabelOwnerKind],
					infrav1.OwnerNameLabel: owner[state.LabelOwnerName], infrav1.OperationLabel: "destroy", infrav1.AttemptLabel: "1"},
				Annotations: map[string]string{infrav1.OwnerUIDAnnotation: uid, infrav1.OwnerAnnotation: object}},
			Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "runner"}}}}},
		}
		if err := env.Client.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	kept := job("alive-destroy-now", live.Name, string(live.UID))
	earlier := job("alive-destroy-before", live.Name, "0b8d5c1e-0000-4000-8000-000000000002")
	gone := job("gone-destroy", "gone", "0b8d5c1e-0000-4000-8000-000000000003")

	e := &Engine{Client: env.Client, APIReader: env.Client}
	// Both sweeps run as after a NotFound: for "alive", one read before it
	// was created.
	for _, key := range []client.ObjectKey{client.ObjectKeyFromObject(live), {Namespace: ns, Name: "gone"}} {
		if err := e.sweepOrphanedJobs(ctx, role, key); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		job  *batchv1.Job
		want bool
		what string
	}{
		{kept, true, "the Job of the object that exists"},
		{earlier, false, "the Job of an earlier object of the same name"},
		{gone, false, "the Job of an object that is gone"},
	} {
		got := &batchv1.Job{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(c.job), got)
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		// A deleted Job may linger while its deletion finishes.
		exists := err == nil && got.DeletionTimestamp.IsZero()
		if exists != c.want {
			t.Errorf("%s: kept %t, want %t", c.what, exists, c.want)
		}
	}
}
