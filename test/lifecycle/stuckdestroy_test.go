package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/kubelet"
)

// TestDestroyWithoutRecordsSaysSo: a machine whose inputs records were
// deleted by hand cannot render its destroy (a machine never renders its
// current spec for one). Deleted, it reports what the stuck-destroy
// runbook lists, ApplyJobSucceeded False DestroyFailed naming the missing
// Secret, and starts no Job. Its attempt record re-created from a copy
// (the runbook's step), the destroy runs and the machine goes.
func TestDestroyWithoutRecordsSaysSo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	k := kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	tm := w.newMachine("m-0")
	w.waitProvisioned(tm)

	var copies []*corev1.Secret
	for _, name := range []string{records.AttemptName("TerraformMachine", tm.Name), records.AppliedName("TerraformMachine", tm.Name)} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(s), s)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		copies = append(copies, s.DeepCopy())
		if err := protection.Delete(t.Context(), env.Client, s); err != nil {
			t.Fatal(err)
		}
	}
	if len(copies) == 0 {
		t.Fatal("the provisioned machine has no inputs record")
	}

	// Its Machine deleted, the garbage collector deletes it (Cluster API
	// does, where it runs).
	machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tm.Name}}
	if err := env.Client.Delete(t.Context(), machine, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	attempt := records.AttemptName("TerraformMachine", tm.Name)
	w.eventually(time.Minute, "the destroy reported stuck on its missing inputs", func() (bool, error) {
		w.get(tm)
		c := conditionOf(tm, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == infrav1.DestroyFailedReason &&
			strings.Contains(c.Message, "The durable inputs Secret "+attempt+" is missing"), nil
	})
	if n := len(w.jobsOf("TerraformMachine", tm.Name, "destroy")); n != 0 {
		t.Fatalf("a destroy started without inputs to render (%d Jobs)", n)
	}

	// The runbook's step: the record back from a copy, without what the
	// API server gave the deleted one.
	for _, s := range copies {
		s.ResourceVersion, s.UID, s.OwnerReferences, s.CreationTimestamp, s.ManagedFields = "", "", nil, metav1.Time{}, nil
		s.Finalizers, s.DeletionTimestamp, s.DeletionGracePeriodSeconds = nil, nil, nil
		w.create(s)
	}
	w.annotate(tm, "test.captf.io/poke", "records-back")
	w.eventually(2*time.Minute, "the machine destroyed and gone", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(tm), tm)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if !w.destroyed(k, "TerraformMachine", tm.Name) {
		t.Error("no destroy ran once the record was back")
	}
}
