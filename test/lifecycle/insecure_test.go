package lifecycle_test

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestInsecurePolicyPastAdmission: a TerraformCluster whose spec.jobs asks
// for a privileged module container, written while the admission webhook
// was down, runs no Job; its condition names the field and what to do.
// Fixed, it provisions. Not parallel: it takes the webhook away from the
// API server for a moment, before any other test runs.
func TestInsecurePolicyPastAdmission(t *testing.T) {
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	withoutWebhooks(t, func() {
		w.newCluster(func(tc *infrav1.TerraformCluster) {
			tc.Spec.Jobs = &infrav1.JobsSpec{SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}
		})
	})
	tc := &infrav1.TerraformCluster{}
	tc.Namespace, tc.Name = w.ns, w.cluster
	w.eventually(time.Minute, "JobPolicyInvalid naming the field", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.JobPolicyInvalidReason &&
			strings.Contains(c.Message, "spec.jobs.securityContext.privileged: weakens the Job's isolation; remove it"), nil
	})
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "")); n != 0 {
		t.Fatalf("%d Jobs ran with a privileged module container", n)
	}
	w.update(tc, func(o client.Object) { o.(*infrav1.TerraformCluster).Spec.Jobs = nil })
	w.waitProvisioned(tc)
}

// withoutWebhooks runs write with CAPTF's validating webhook configuration
// removed from the API server, as while the manager was down with a
// failure policy that lets writes through, or before a rule existed.
func withoutWebhooks(t *testing.T, write func()) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "captf-validating-webhook-configuration"}, vwc); err != nil {
		t.Fatal(err)
	}
	saved := vwc.DeepCopy()
	saved.ResourceVersion, saved.UID, saved.CreationTimestamp, saved.ManagedFields = "", "", metav1.Time{}, nil
	restore := func() {
		if err := env.Client.Create(ctx, saved.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("restoring the webhook configuration: %v", err)
		}
	}
	t.Cleanup(restore)
	if err := env.Client.Delete(ctx, vwc); err != nil {
		t.Fatal(err)
	}
	write()
	restore()
}
