package lifecycle_test

import (
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestACleanupCutShortReportsNoLostState: the cleanup after a successful
// destroy deletes the state Secrets first; cut short after that (here an
// admission policy refuses to let go of the plan key; with two managers,
// the other one's cleanup), the next passes find no state. The object
// destroyed its infrastructure, so that is no lost state: StateReadable
// says the cleanup deletes it and no StateLost Warning goes out. The
// destroy Job deleted meanwhile (by hand, or by its TTL after a week),
// the status still says the destroy succeeded, and the object goes once
// the cleanup can finish, rather than be held for a lost state.
func TestACleanupCutShortReportsNoLostState(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)

	planKey := records.PlanKeyName("TerraformCluster", tc.Name)
	allow := envtest.Refuse(t, env.Client, envtest.Refusal{Namespace: w.ns, Resource: "secrets",
		Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete},
		Expression: "!(request.operation == 'DELETE' ? oldObject : object).metadata.name.startsWith('" + records.PlanKeyPrefix + "')",
		Message:    "plan keys stay here",
		Probe: func() client.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: records.PlanKeyPrefix + "probe"}}
		}})
	if err := env.Client.Delete(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	suffix, _ := state.Suffix(w.ns, state.KindCluster, tc.Name)
	w.eventually(3*time.Minute, "the state deleted by the cleanup, and a pass reading none", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: state.SecretName(suffix)}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			return false, client.IgnoreNotFound(err)
		}
		w.get(tc)
		c := meta.FindStatusCondition(tc.Status.Conditions, infrav1.StateReadableCondition)
		return c != nil && c.Status != metav1.ConditionTrue, nil
	})
	c := meta.FindStatusCondition(tc.Status.Conditions, infrav1.StateReadableCondition)
	if c.Reason != infrav1.StateNotFoundReason || c.Status != metav1.ConditionUnknown {
		t.Errorf("with its cleanup cut short after the destroy, StateReadable is %s/%s (%s); want Unknown/%s", c.Status, c.Reason, c.Message, infrav1.StateNotFoundReason)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: planKey}, &corev1.Secret{}); err != nil {
		t.Fatalf("the plan key the policy keeps: %v", err)
	}

	destroy := string(infrav1.OperationDestroy)
	finished := w.jobsOf(state.KindCluster, tc.Name, destroy)
	if len(finished) == 0 {
		t.Fatal("no destroy Job to delete: the cleanup was cut short before the destroy's end was read")
	}
	for _, j := range finished {
		if err := env.Client.Delete(t.Context(), &j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
	}
	w.eventually(time.Minute, "the destroy Job gone", func() (bool, error) {
		return len(w.jobsOf(state.KindCluster, tc.Name, destroy)) == 0, nil
	})

	allow()
	w.eventually(2*time.Minute, "the cluster gone", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(tc), &infrav1.TerraformCluster{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if slices.Contains(w.events(tc.Name), infrav1.StateLostReason) {
		t.Errorf("a Warning %s went out for a state the cleanup deleted after the destroy", infrav1.StateLostReason)
	}
}
