package workspace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestStalePassPlanKey: two managers (or a pass that read the object just
// before its release) race on a deleting TerraformCluster. The release
// deleted its plan key; the pass that read the object still deleting makes
// the key again, after the object is gone. The garbage collector deletes
// that key, and no protection may hold it (and so the namespace) for ever.
// A live object's key stays protected.
func TestStalePassPlanKey(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	e := &Engine{Client: env.Client, APIReader: env.Client}
	for _, tc := range []struct {
		name, ns      string
		deleteRelease bool
	}{
		{name: "made by a pass of a deleting object released meanwhile", ns: "stale-plankey", deleteRelease: true},
		{name: "made by a pass of a live object", ns: "live-plankey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := newCluster(t, tc.ns, "c", role.Finalizer())
			read := obj
			if tc.deleteRelease {
				if err := env.Client.Delete(ctx, obj); err != nil {
					t.Fatal(err)
				}
				read = &infrav1.TerraformCluster{}
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), read); err != nil {
					t.Fatal(err)
				}
				// The other manager's release: the finalizer goes, so does the object.
				released := read.DeepCopy()
				controllerutil.RemoveFinalizer(released, role.Finalizer())
				if err := env.Client.Update(ctx, released); err != nil {
					t.Fatal(err)
				}
			}
			p := &pass{e: e, role: role, obj: read, w: role.View(read), before: read.DeepCopy()}
			if err := p.loadRecords(ctx); err != nil {
				t.Fatal(err)
			}
			if err := p.protectDeleting(ctx); err != nil {
				t.Fatal(err)
			}
			key := &corev1.Secret{}
			name := client.ObjectKey{Namespace: tc.ns, Name: records.PlanKeyName(role.Kind(), "c")}
			if err := env.Client.Get(ctx, name, key); err != nil {
				t.Fatalf("the pass made no plan key: %v", err)
			}
			if !tc.deleteRelease {
				if !protection.Protected(key) {
					t.Errorf("a live object's plan key has finalizers %v, want %s", key.Finalizers, protection.Finalizer)
				}
				_ = protection.Release(ctx, env.Client, key)
				return
			}
			// The garbage collector deletes it: its owner is gone.
			if err := env.Client.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Get(ctx, name, key); !apierrors.IsNotFound(err) {
				t.Errorf("the plan key a stale pass made: %v, finalizers %v; want it gone with its owner (it would hold namespace %s's deletion)",
					err, key.Finalizers, tc.ns)
				_ = protection.Release(ctx, env.Client, key)
			}
		})
	}
}
