package lifecycle_test

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
)

// TestOwnerlessObjectIsReleasedWhilePaused: a TerraformMachine left
// behind without its Machine (a clusterctl move cut short: it carries the
// finalizer and the pause) and with nothing applied is deleted at once,
// pause or not, instead of hanging on its finalizer forever.
func TestOwnerlessObjectIsReleasedWhilePaused(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	tm := &infrav1.TerraformMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "left-behind",
			Labels:      map[string]string{clusterv1.ClusterNameLabel: w.cluster},
			Annotations: map[string]string{infrav1.PausedAnnotation: ""},
			Finalizers:  []string{"terraformmachine.infrastructure.cluster.x-k8s.io"}},
		Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: w.image("noop-machine")}},
	}
	w.create(tm)
	w.eventually(time.Minute, "the ownerless machine reported", func() (bool, error) {
		w.get(tm)
		c := conditionOf(tm, infrav1.DependenciesReadyCondition)
		return c != nil && c.Reason == infrav1.WaitingForOwnerMachineReason, nil
	})
	if err := env.Client.Delete(t.Context(), tm); err != nil {
		t.Fatal(err)
	}
	w.eventually(time.Minute, "the ownerless machine released", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(tm), &infrav1.TerraformMachine{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if n := len(w.jobsOf("TerraformMachine", tm.Name, "")); n != 0 {
		t.Errorf("%d Jobs for a machine that never had an owner", n)
	}
}
