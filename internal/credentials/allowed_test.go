package credentials_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/test/envtest"
)

func TestAllowedNamespaces(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	listed := namespace(t, "listed", nil)
	labelled := namespace(t, "labelled", map[string]string{"tenant": "blue"})
	other := namespace(t, "other", map[string]string{"tenant": "red"})
	const missing = "does-not-exist-yet"
	blue := &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "blue"}}
	invalid := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenant", Operator: "Resembles", Values: []string{"blue"}}}}

	testCases := []struct {
		name      string
		allowed   *infrav1.AllowedNamespaces
		namespace string
		want      bool
		says      string
	}{
		{"unset allows none", nil, listed, false, "spec.allowedNamespaces is unset"},
		{"list allows a listed namespace", &infrav1.AllowedNamespaces{List: []string{listed}}, listed, true, "spec.allowedNamespaces.list"},
		{"list allows only listed namespaces", &infrav1.AllowedNamespaces{List: []string{listed}}, other, false, "does not allow namespace"},
		{"selector allows a matching namespace", &infrav1.AllowedNamespaces{Selector: blue}, labelled, true, "match spec.allowedNamespaces.selector"},
		{"selector refuses a namespace that does not match", &infrav1.AllowedNamespaces{Selector: blue}, other, false, "does not allow namespace"},
		{"selector {} allows every namespace", &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{}}, other, true, "every namespace"},
		{"selector {} allows a namespace that does not exist yet", &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{}}, missing, true, "every namespace"},
		{"both: the list part", &infrav1.AllowedNamespaces{List: []string{listed}, Selector: blue}, listed, true, "list"},
		{"both: the selector part", &infrav1.AllowedNamespaces{List: []string{listed}, Selector: blue}, labelled, true, "selector"},
		{"both: neither", &infrav1.AllowedNamespaces{List: []string{listed}, Selector: blue}, other, false, "does not allow"},
		{"listed but missing namespace is refused", &infrav1.AllowedNamespaces{List: []string{missing}}, missing, false, "does not exist"},
		{"selector and missing namespace is refused", &infrav1.AllowedNamespaces{Selector: blue}, missing, false, "does not exist"},
		{"invalid selector refuses", &infrav1.AllowedNamespaces{Selector: invalid}, labelled, false, "spec.allowedNamespaces.selector"},
		{"invalid selector does not hide the list", &infrav1.AllowedNamespaces{List: []string{listed}, Selector: invalid}, listed, true, "list"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			id := identity("allowed-table", "captf-system", "creds", tc.allowed)
			got, why, err := credentials.Allowed(ctx, env.Client, id, tc.namespace)
			if err != nil {
				t.Fatalf("Allowed returned an error: %v", err)
			}
			if got != tc.want || !strings.Contains(why, tc.says) {
				t.Fatalf("Allowed(%s) = %v, %q; want %v with a reason naming %q", tc.namespace, got, why, tc.want, tc.says)
			}
			record(why)
		})
	}
}

func TestNamespaceLabelChangeTakesEffectImmediately(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	ns := namespace(t, "relabel", map[string]string{"tenant": "blue"})
	id := identity("relabel", "captf-system", "creds", &infrav1.AllowedNamespaces{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "blue"}},
	})
	if ok, why, err := credentials.Allowed(ctx, env.Client, id, ns); err != nil || !ok {
		t.Fatalf("before the relabel: Allowed = %v, %q, %v; want allowed", ok, why, err)
	}
	obj := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, obj); err != nil {
		t.Fatal(err)
	}
	obj.Labels["tenant"] = "red"
	if err := env.Client.Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if ok, why, err := credentials.Allowed(ctx, env.Client, id, ns); err != nil || ok {
		t.Fatalf("right after the relabel: Allowed = %v, %q, %v; want refused at once", ok, why, err)
	}
}
