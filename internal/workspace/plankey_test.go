package workspace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestStalePassLeavesNoPlanKey: two managers (or a pass that read the
// object just before its release) race on a deleting TerraformCluster.
// The pass that read it still deleting finds its plan key missing (the
// release deleted it) and makes it again, after the object is gone. The
// garbage collector deletes that key, and its protection must not hold
// it (and so the namespace) for ever: the pass the object's delete event
// brings finds the object gone and releases it. A key retained with the
// state stays.
func TestStalePassLeavesNoPlanKey(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	e := &Engine{Client: env.Client, APIReader: env.Client}
	for _, tc := range []struct {
		name     string
		retained bool
		wantGone bool
	}{
		{name: "made by a stale pass", wantGone: true},
		{name: "retained with the state", retained: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := "stale-plankey-" + map[bool]string{true: "retained", false: "made"}[tc.retained]
			if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				t.Fatal(err)
			}
			obj := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c", Finalizers: []string{role.Finalizer()}},
				Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "example.test/cluster:1"}, IdentityRef: &infrav1.IdentityReference{Name: "cloud"}}}
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Delete(ctx, obj); err != nil {
				t.Fatal(err)
			}
			stale := &infrav1.TerraformCluster{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), stale); err != nil {
				t.Fatal(err)
			}
			// The other manager's release: the finalizer goes, so does the object.
			released := stale.DeepCopy()
			controllerutil.RemoveFinalizer(released, role.Finalizer())
			if err := env.Client.Update(ctx, released); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), &infrav1.TerraformCluster{}); !apierrors.IsNotFound(err) {
				t.Fatalf("the released object: %v, want it gone", err)
			}

			p := &pass{e: e, role: role, obj: stale, w: role.View(stale), before: stale.DeepCopy()}
			if err := p.loadRecords(ctx); err != nil {
				t.Fatal(err)
			}
			if err := p.patchStatus(ctx, true); err != nil {
				t.Fatal(err)
			}
			key := &corev1.Secret{}
			keyName := client.ObjectKey{Namespace: ns, Name: records.PlanKeyName(role.Kind(), "c")}
			if err := env.Client.Get(ctx, keyName, key); err != nil {
				t.Fatalf("the stale pass made no plan key (%v): the race this test is about did not happen", err)
			}
			if tc.retained {
				key.Labels[infrav1.RetainedFromUIDLabel] = string(stale.UID)
				if err := env.Client.Update(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			// The garbage collector deletes it: its owner is gone.
			if err := env.Client.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}

			// The pass the object's delete event brings.
			if _, err := e.Reconcile(ctx, role, client.ObjectKeyFromObject(obj)); err != nil {
				t.Fatal(err)
			}
			err := env.Client.Get(ctx, keyName, key)
			switch {
			case tc.wantGone && !apierrors.IsNotFound(err):
				t.Errorf("the plan key after the next pass: %v, finalizers %v; want it gone (it holds namespace %s's deletion)", err, key.Finalizers, ns)
			case !tc.wantGone && (err != nil || !protection.Protected(key)):
				t.Errorf("the retained plan key after the next pass: %v, finalizers %v; want it kept and protected", err, key.Finalizers)
			}
			if !tc.wantGone {
				_ = protection.Release(ctx, env.Client, key)
			}
		})
	}
}
