package credentials_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/test/envtest"
)

// gcPatience is how long the tests give kube-controller-manager's garbage
// collector to (wrongly) delete a mirror that still has an owner.
const gcPatience = 10 * time.Second

func TestGarbageCollectorKeepsAMirrorWhileAnyOwnerExists(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	system := namespace(t, "system", nil)
	tenant := namespace(t, "tenant", nil)
	src := sourceSecret(t, system, "aws-creds", credentialData())
	id := identity("gc", system, src.Name, &infrav1.AllowedNamespaces{List: []string{tenant}})
	a := cluster(t, tenant, "a", id.Name)
	b := cluster(t, tenant, "b", id.Name)
	ensure(t, id, a, credentials.OutcomeCreated)
	ensure(t, id, b, credentials.OutcomeUpdated)

	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	waitGone(t, a)
	// Poll for the whole patience: the mirror must exist at every look.
	deadline := time.Now().Add(gcPatience)
	for time.Now().Before(deadline) {
		m := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: tenant, Name: credentials.MirrorName(id.Name)}, m); err != nil {
			t.Fatalf("the mirror vanished while TerraformCluster b still owns it: %v", err)
		}
		if m.DeletionTimestamp != nil {
			t.Fatal("the garbage collector started deleting the mirror while TerraformCluster b still owns it")
		}
		time.Sleep(500 * time.Millisecond)
	}

	// Control: once the last owner is gone the collector does delete it,
	// so the wait above proved something.
	if err := env.Client.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	mirrorGone(t, tenant, id.Name)
}

func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("%s was not deleted: %v", obj.GetName(), err)
	}
}

func mirrorGone(t *testing.T, ns, identity string) {
	t.Helper()
	key := client.ObjectKey{Namespace: ns, Name: credentials.MirrorName(identity)}
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, &corev1.Secret{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("mirror %s was not deleted: %v", key, err)
	}
}
