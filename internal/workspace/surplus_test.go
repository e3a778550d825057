package workspace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestSurplusPiecesAreLetGo: the state pieces Terraform deleted while
// shrinking the state, which the protection kept, are let go by the chore
// ReleaseSurplus: one already being deleted goes, one not is only
// unprotected; the pieces the state still holds keep their protection.
func TestSurplusPiecesAreLetGo(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	tc := newCluster(t, "surplus", "c")
	piece := func(name string) *corev1.Secret {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tc.Namespace, Name: name, Finalizers: []string{protection.Finalizer}}}
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	deleted, unused, kept := piece("tfstate-default-c-part-3"), piece("tfstate-default-c-part-2"), piece("tfstate-default-c")
	if err := env.Client.Delete(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(deleted), deleted); err != nil {
		t.Fatal(err)
	}
	p := &pass{e: &Engine{Client: env.Client, APIReader: env.Client}, role: roles.Cluster{}, obj: tc, w: roles.Cluster{}.View(tc)}
	p.surplus = []corev1.Secret{*deleted, *unused}
	if err := p.releaseSurplus(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(deleted), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the piece being deleted: %v, want it gone", err)
	}
	for s, protected := range map[*corev1.Secret]bool{unused: false, kept: true} {
		got := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
			t.Fatal(err)
		}
		if protection.Protected(got) != protected {
			t.Errorf("piece %s protected: %t, want %t", s.Name, protection.Protected(got), protected)
		}
	}
}
