package envtest

import (
	"context"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Refusal is what an admission policy refuses (Refuse): the operations on
// a resource of the core group, in one namespace, whose object fails a
// CEL expression.
type Refusal struct {
	Namespace, Resource string
	Operations          []admissionv1.OperationType
	Expression, Message string
	// Probe returns a new object the policy refuses on create, to learn
	// when it is in force (and when it is lifted).
	Probe func() client.Object
}

// Refuse makes the API server refuse what r says, as a cluster's admission
// policy would, and returns once r's probe is refused. allow lifts the
// refusal and returns once a probe is taken (and deleted again); the
// policy goes with the test in any case.
func Refuse(t testing.TB, c client.Client, r Refusal) (allow func()) {
	t.Helper()
	ctx := context.Background()
	name := "deny-" + r.Resource + "-" + r.Namespace
	policy := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: r.Operations,
					Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{r.Resource}}}}}},
			Validations: []admissionv1.Validation{{Expression: r.Expression, Message: r.Message}},
		}}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: r.Namespace}}}}}
	for _, o := range []client.Object{policy, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating the admission policy %s: %v", name, err)
		}
	}
	t.Cleanup(func() {
		_ = c.Delete(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name}})
		_ = c.Delete(ctx, &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	// taken tries a probe, and deletes it again when it was taken.
	taken := func() (bool, error) {
		o := r.Probe()
		if err := c.Create(ctx, o); err != nil {
			return false, nil
		}
		return true, c.Delete(ctx, o)
	}
	until(t, "the policy refusing "+r.Resource+" in force", func() (bool, error) {
		ok, err := taken()
		return !ok, err
	})
	return func() {
		t.Helper()
		if err := c.Delete(ctx, binding); err != nil {
			t.Fatal(err)
		}
		until(t, "the policy on "+r.Resource+" lifted", taken)
	}
}

// until polls cond (the API server's admission caches catch up within
// seconds) and fails the test after a minute.
func until(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
