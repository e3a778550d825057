package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestVanishedFirstApplyHoldsUntilConfirmed: the first apply Job of a
// TerraformCluster vanishes before it reports (deleted by hand), so
// nobody knows whether it created resources and there is no state. The
// object holds with StateReadable=False/ApplyOutcomeUnknown, starts no
// apply, ignores a confirmation naming another Job, and applies again
// once the user confirms the Job created nothing.
func TestVanishedFirstApplyHoldsUntilConfirmed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	// The image cannot be pulled: the Job never gets going, and is deleted.
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.Source.Image = "local/no-such-module:tofu" })
	var job string
	w.eventually(time.Minute, "the apply Job started", func() (bool, error) {
		w.get(tc)
		if tc.Status.ActiveJob != nil {
			job = tc.Status.ActiveJob.Name
		}
		return job != "", nil
	})
	// The image is fixed meanwhile: only the confirmation lets it run.
	w.update(tc, func(o client.Object) {
		o.(*infrav1.TerraformCluster).Spec.Source.Image = w.image("noop-cluster")
	})
	jobs := w.jobsOf(state.KindCluster, tc.Name, "apply")
	if len(jobs) != 1 {
		t.Fatalf("%d apply Jobs, want 1", len(jobs))
	}
	if err := env.Client.Delete(t.Context(), &jobs[0], client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	w.eventually(time.Minute, "ApplyOutcomeUnknown reported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.StateReadableCondition)
		return c != nil && c.Reason == infrav1.ApplyOutcomeUnknownReason, nil
	})
	c := conditionOf(tc, infrav1.StateReadableCondition)
	if want := infrav1.ConfirmNoResourcesAnnotation + "=" + job; !strings.Contains(c.Message, want) {
		t.Errorf("StateReadable message %q does not say how to confirm (%s)", c.Message, want)
	}
	if c := conditionOf(tc, infrav1.ApplyJobSucceededCondition); c == nil || !strings.Contains(c.Message, "vanished") {
		t.Errorf("ApplyJobSucceeded = %+v, want it to say the Job vanished", c)
	}
	attempt, _, err := records.Load(t.Context(), env.Client, w.ns, state.KindCluster, tc.Name)
	if err != nil || attempt == nil || attempt.UnconfirmedApply != job || !attempt.MayHaveApplied {
		t.Fatalf("attempt record = %+v (%v), want it to name %s as unconfirmed and possibly applied", attempt, err, job)
	}
	w.waitEvent(tc.Name, "StateLost")

	// A confirmation naming another Job changes nothing.
	w.annotate(tc, infrav1.ConfirmNoResourcesAnnotation, "some-other-job")
	w.passOver(tc)
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "apply")); n != 0 {
		t.Fatalf("%d apply Jobs while the outcome is unknown, want none", n)
	}
	w.get(tc)
	if c := conditionOf(tc, infrav1.StateReadableCondition); c.Reason != infrav1.ApplyOutcomeUnknownReason {
		t.Fatalf("StateReadable = %+v after a confirmation of another Job, want the hold", c)
	}

	w.annotate(tc, infrav1.ConfirmNoResourcesAnnotation, job)
	w.waitProvisioned(tc)
	if _, ok := tc.Annotations[infrav1.ConfirmNoResourcesAnnotation]; ok {
		t.Errorf("the consumed %s annotation is still on the object", infrav1.ConfirmNoResourcesAnnotation)
	}
	attempt, _, err = records.Load(t.Context(), env.Client, w.ns, state.KindCluster, tc.Name)
	if err != nil || attempt == nil || attempt.UnconfirmedApply != "" {
		t.Errorf("attempt record = %+v (%v) after the confirmation, want no unconfirmed apply", attempt, err)
	}
}
