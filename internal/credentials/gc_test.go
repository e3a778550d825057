package credentials_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/test/envtest"
)

// gcPatience is how long the tests give kube-controller-manager's garbage
// collector to (wrongly) delete a mirror that still has an owner.
const gcPatience = 10 * time.Second

func TestGarbageCollectorKeepsAMirrorWhileAnyOwnerExists(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	tenant, _, id := lend(t, "gc", "aws-creds")
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
	// so the wait above proved something. The state protection keeps it
	// until CAPTF lets go: here no user is left that could destroy with
	// it, so it is abandoned and released.
	if err := env.Client.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	m := mirrorBeingDeleted(t, tenant, id.Name, nil)
	if released, err := credentials.ReleaseAbandonedMirror(ctx, env.Client, env.Client, m); err != nil || !released {
		t.Fatalf("ReleaseAbandonedMirror: %v, %v; want the abandoned mirror released", released, err)
	}
	mirrorGone(t, tenant, id.Name)
}

// A mirror the garbage collector deletes while one of its users still
// exists (all of them deleted with foreground propagation) is kept for
// their destroy.
func TestAMirrorBeingDeletedIsKeptWhileAUserExists(t *testing.T) {
	envtest.Require(t, env)
	ctx := testContext(t)
	tenant, _, id := lend(t, "fg", "aws-creds")
	a := cluster(t, tenant, "a", id.Name)
	ensure(t, id, a, credentials.OutcomeCreated)
	// The user is being deleted but still exists (a finalizer holds it).
	a.Finalizers = []string{"example.com/hold"}
	if err := env.Client.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, a, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	m := mirrorBeingDeleted(t, tenant, id.Name, a)
	key := client.ObjectKeyFromObject(m)
	if released, err := credentials.ReleaseAbandonedMirror(ctx, env.Client, env.Client, m); err != nil || released {
		t.Fatalf("ReleaseAbandonedMirror: %v, %v; want the mirror kept for its user's destroy", released, err)
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, key, s); err != nil || len(s.Data["AWS_ACCESS_KEY_ID"]) == 0 {
		t.Fatalf("the mirror of a user still to be destroyed is unreadable: %v", err)
	}
	if err := env.Client.Patch(ctx, a, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`))); err != nil {
		t.Fatal(err)
	}
}

// gcWait bounds a wait for kube-controller-manager's garbage collector:
// seconds on an idle machine, over two minutes when the whole suite
// shares two cores.
const gcWait = 4 * time.Minute

func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, gcWait, true, func(ctx context.Context) (bool, error) {
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
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, gcWait, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, &corev1.Secret{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("mirror %s was not deleted: %v", key, err)
	}
}

// mirrorBeingDeleted waits until the garbage collector has deleted the
// identity's mirror in ns, which its protection keeps, and returns its
// metadata. foreground, when set, is the user deleted with foreground
// propagation: the collector may leave the mirror of a user that still
// exists to the user's removal (envtest.DeleteAsTheCollector).
func mirrorBeingDeleted(t *testing.T, ns, identity string, foreground client.Object) *metav1.PartialObjectMetadata {
	t.Helper()
	key := client.ObjectKey{Namespace: ns, Name: credentials.MirrorName(identity)}
	m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, gcWait, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, key, m); err != nil || m.DeletionTimestamp != nil {
			return err == nil, nil
		}
		if foreground == nil {
			return false, nil
		}
		deleted, err := envtest.DeleteAsTheCollector(ctx, env.Client, foreground, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}})
		if deleted {
			t.Logf("the garbage collector left mirror %s to its user's removal: deleted as it does when it comes first", key)
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("the garbage collector did not delete mirror %s: %v", key, err)
	}
	return m
}
