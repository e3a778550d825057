package lifecycle_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestJobSlotsCannotBeSquatted: a tenant with edit rights in its own
// namespace makes 300 suspended Jobs that look like CAPTF's (the managed
// label, owner labels and annotations), more than --max-active-jobs (200):
// a third name an object that does not exist, a third are owned by a real
// TerraformCluster of that namespace, a third name no owner. A cluster in
// another namespace still provisions and is destroyed, never waiting for
// a slot.
func TestJobSlotsCannotBeSquatted(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	k := kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	squatter := "squat-" + randomSuffix(t)
	w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: squatter}})
	t.Cleanup(func() {
		_ = env.Client.Delete(context.WithoutCancel(t.Context()), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: squatter}})
	})
	// The tenant's own TerraformCluster: no Cluster owns it, so it never
	// runs a Job of its own.
	own := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: squatter, Name: "victim"},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: w.image("noop-cluster")}, IdentityRef: &infrav1.IdentityReference{Name: w.identity}}}
	w.create(own)
	const squatters = 300
	for i := range squatters {
		name := fmt.Sprintf("captf-c-victim-apply-a%d-000000", i+1)
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: squatter, Name: name,
				Labels: map[string]string{infrav1.ManagedLabel: "true", infrav1.OwnerKindLabel: state.KindCluster,
					infrav1.OwnerNameLabel: "victim", infrav1.OperationLabel: "apply", infrav1.AttemptLabel: fmt.Sprint(i + 1)},
				Annotations: map[string]string{infrav1.OwnerUIDAnnotation: fmt.Sprintf("00000000-0000-0000-0000-%012d", i), infrav1.OwnerAnnotation: "ghost"}},
			Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "squat"}}}}},
		}
		switch i % 3 {
		case 1: // owned by the tenant's live TerraformCluster: one slot at most
			j.OwnerReferences = []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: state.KindCluster,
				Name: own.Name, UID: own.UID, Controller: ptr.To(true)}}
		case 2: // no owner at all
			j.Annotations = nil
		}
		if err := env.Client.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
	}

	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	if err := env.Client.Delete(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	w.eventually(3*time.Minute, "the cluster destroyed and gone", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(tc), tc)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	for _, r := range w.events(tc.Name) {
		if r == infrav1.WaitingForJobSlotReason {
			t.Errorf("the cluster waited for a Job slot the squatted Jobs took")
		}
	}
	if !slices.ContainsFunc(k.Runs(), func(r kubelet.Run) bool {
		return r.Namespace == w.ns && strings.HasPrefix(r.Job, "captf-c-demo-destroy-") && r.ExitCode == 0
	}) {
		t.Errorf("the cluster went without a successful destroy Job")
	}
}
