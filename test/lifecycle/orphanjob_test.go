package lifecycle_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// TestOrphanedJobIsSwept: a Job without an owner reference (one that ran
// while its object was being deleted) whose object is gone, as when the
// manager was killed between removing the object's finalizer and deleting
// that Job, is deleted by the manager as soon as it sees it, not after its
// seven-day TTL. A Job naming an object that exists is left alone.
func TestOrphanedJobIsSwept(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	w.newCluster(nil)
	job := func(object, uid string) *batchv1.Job {
		labels := state.OwnerLabels(state.KindMachine, object, w.cluster)
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "captf-m-" + object + "-destroy-a1-0a1b2c",
				Labels: map[string]string{infrav1.ManagedLabel: "true", infrav1.OwnerKindLabel: labels[state.LabelOwnerKind],
					infrav1.OwnerNameLabel: labels[state.LabelOwnerName], infrav1.OperationLabel: "destroy", infrav1.AttemptLabel: "1"},
				Annotations: map[string]string{infrav1.OwnerUIDAnnotation: uid, infrav1.OwnerAnnotation: object}},
			Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "runner"}}}}},
		}
	}
	// A live machine's unowned Job (its object is being deleted, say).
	tm := w.newMachine("alive")
	kept := job(tm.Name, string(tm.UID))
	w.create(kept)
	orphan := job("gone", "0b8d5c1e-0000-4000-8000-000000000001")
	w.create(orphan)
	w.eventually(time.Minute, "the orphaned Job deleted", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(orphan), &batchv1.Job{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(kept), &batchv1.Job{}); err != nil {
		t.Errorf("the Job of a live machine is gone: %v", err)
	}
}
