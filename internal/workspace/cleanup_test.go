package workspace

import (
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestAStaleReleaseLeavesANewObjectOfTheNameAlone: a pass that read an
// object before another manager released it, and that removes its
// finalizer once the name holds a new object (GitOps re-created it),
// strips nothing of the new one: its finalizer keeps what it will build
// from going without a destroy.
func TestAStaleReleaseLeavesANewObjectOfTheNameAlone(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	old := newCluster(t, "stale-release", "c", role.Finalizer())
	p := &pass{e: &Engine{Client: env.Client, APIReader: env.Client}, role: role, obj: old.DeepCopy(), w: role.View(old)}

	released := old.DeepCopy()
	controllerutil.RemoveFinalizer(released, role.Finalizer())
	if err := env.Client.Patch(ctx, released, client.MergeFrom(old)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, released); err != nil {
		t.Fatal(err)
	}
	renewed := renewCluster(t, old, role.Finalizer())

	if err := p.removeFinalizer(ctx); err == nil {
		t.Error("removing the finalizer of an object whose name holds another one by then succeeded")
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(renewed), renewed); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(renewed.Finalizers, role.Finalizer()) {
		t.Error("a stale release stripped the finalizer of the new object of the name")
	}
	if p.released {
		t.Error("the stale pass counts an object it did not release as released")
	}
}
