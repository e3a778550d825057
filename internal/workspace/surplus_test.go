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
	"captf.io/captf/pkg/state"
)

// TestSurplusPiecesAreLetGo: a piece Terraform deleted while shrinking the
// state, which the protection kept, is set aside from the state read and
// let go by the chore ReleaseSurplus; the state's own piece stays, kept
// by the protection, even while being deleted too.
func TestSurplusPiecesAreLetGo(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	tc := newCluster(t, "surplus", "c")
	suffix, err := state.Suffix(tc.Namespace, roles.Cluster{}.Kind(), tc.Name)
	if err != nil {
		t.Fatal(err)
	}
	deletedPiece := func(name string) *corev1.Secret {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tc.Namespace, Name: name, Labels: state.PieceLabels(suffix), Finalizers: []string{protection.Finalizer}},
			Data: map[string][]byte{state.DataKey: []byte("short: the state ends here")}}
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	base, surplus := deletedPiece(state.SecretName(suffix)), deletedPiece(state.SecretName(suffix)+"-part-1")
	t.Cleanup(func() {
		got := &corev1.Secret{}
		if env.Client.Get(ctx, client.ObjectKeyFromObject(base), got) == nil && protection.Unprotect(got) {
			_ = env.Client.Update(ctx, got)
		}
	})
	var pieces corev1.SecretList
	if err := env.Client.List(ctx, &pieces, client.InNamespace(tc.Namespace)); err != nil {
		t.Fatal(err)
	}
	p := &pass{e: &Engine{Client: env.Client, APIReader: env.Client}, role: roles.Cluster{}, obj: tc, w: roles.Cluster{}.View(tc)}
	p.stored.secrets, p.stored.data = pieces.Items, true
	p.setAsideSurplus()
	if len(p.stored.secrets) != 1 || p.stored.secrets[0].Name != base.Name || len(p.stored.surplus) != 1 || p.stored.surplus[0].Name != surplus.Name {
		t.Fatalf("set aside %d pieces, read %d; want %s aside and %s read", len(p.stored.surplus), len(p.stored.secrets), surplus.Name, base.Name)
	}
	if err := p.releaseSurplus(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(surplus), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the surplus piece: %v, want it gone", err)
	}
	got := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(base), got); err != nil || !protection.Protected(got) {
		t.Errorf("the state's own piece: %v, protected %t; want it kept", err, protection.Protected(got))
	}
}
