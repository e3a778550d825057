package webhooks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func metav1ObjectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func sourceSecret(t *testing.T, ns, name string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": credValue, "AWS_SECRET_ACCESS_KEY": credValue}}
	if err := admin.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
}

func identityObject(name, secretNS, secretName string, allowed ...string) *infrav1.TerraformClusterIdentity {
	id := &infrav1.TerraformClusterIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       infrav1.TerraformClusterIdentitySpec{SecretRef: infrav1.SecretReference{Namespace: secretNS, Name: secretName}},
	}
	if len(allowed) > 0 {
		id.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{List: allowed}
	}
	return id
}

func clusterObject(ns, name string, identityRef *infrav1.IdentityReference) *infrav1.TerraformCluster {
	return &infrav1.TerraformCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "registry.example/modules/noop:v1"}, IdentityRef: identityRef},
	}
}

// rejected expects an API error of the given kind naming every fragment.
func rejected(t *testing.T, err error, is func(error) bool, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the API server accepted the request; want a rejection naming %q", want)
	}
	capture(err.Error())
	if !is(err) {
		t.Fatalf("unexpected kind of error: %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not name %q:\n%v", w, err)
		}
	}
}

// eventually retries f until it returns nil (RBAC changes reach the
// authorizer's cache after a moment) and returns its last error.
func eventually(t *testing.T, f func() error) error {
	t.Helper()
	var last error
	_ = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		last = f()
		return last == nil, nil
	})
	return last
}

var isInvalid = apierrors.IsInvalid
var isForbidden = apierrors.IsForbidden
