package workspace

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestAReleasedObjectProtectsNothingAgain: a pass that read a deleting
// object before another manager's cleanup removed its finalizer (another
// finalizer keeps the object here) does not protect again the records
// that cleanup let go of: they would stay, terminating, with nobody left
// to release them.
func TestAReleasedObjectProtectsNothingAgain(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	const ns, keep = "released-protect", "test.captf.io/keep"
	obj := newCluster(t, ns, "c", role.Finalizer(), keep)
	if err := env.Client.Delete(ctx, obj); err != nil {
		t.Fatal(err)
	}
	read := &infrav1.TerraformCluster{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), read); err != nil {
		t.Fatal(err)
	}
	attempt := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: records.AttemptName(role.Kind(), obj.Name)}}
	if err := env.Client.Create(ctx, attempt); err != nil {
		t.Fatal(err)
	}
	p := &pass{e: &Engine{Client: env.Client, APIReader: env.Client}, role: role, obj: read, w: role.View(read)}
	protected := func() bool {
		t.Helper()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(attempt), attempt); err != nil {
			t.Fatal(err)
		}
		return slices.Contains(attempt.Finalizers, protection.Finalizer)
	}
	t.Cleanup(func() { _ = protection.Delete(ctx, env.Client, attempt) })

	// Still holding its finalizer, the deleting object protects its record.
	if err := p.protectDeleting(ctx); err != nil {
		t.Fatal(err)
	}
	if !protected() {
		t.Fatal("the attempt record of a deleting object was not protected")
	}
	// The other manager's cleanup lets go of it and removes the finalizer.
	if err := protection.Release(ctx, env.Client, attempt); err != nil {
		t.Fatal(err)
	}
	released := read.DeepCopy()
	controllerutil.RemoveFinalizer(released, role.Finalizer())
	if err := env.Client.Patch(ctx, released, client.MergeFrom(read)); err != nil {
		t.Fatal(err)
	}
	if err := p.protectDeleting(ctx); err != nil {
		t.Fatal(err)
	}
	if protected() {
		t.Error("the attempt record of an object released meanwhile was protected again")
	}

	// Gone, and its name taken by a new object (holding the finalizer from
	// its first pass): the stale pass protects nothing for that one either.
	gone := released.DeepCopy()
	controllerutil.RemoveFinalizer(gone, keep)
	if err := env.Client.Patch(ctx, gone, client.MergeFrom(released)); err != nil {
		t.Fatal(err)
	}
	renewCluster(t, obj, role.Finalizer())
	if err := p.protectDeleting(ctx); err != nil {
		t.Fatal(err)
	}
	if protected() {
		t.Error("a stale pass protected the records of a new object of the name")
	}
}
