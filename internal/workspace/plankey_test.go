package workspace

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
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
			if err := p.doChores(ctx, decide.Chores(p.choreSnapshot(tc.deleteRelease))); err != nil {
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

// TestPlanKeyChore: the pass keys its hashes with the plan key it made in
// memory, and the chore MakePlanKey writes that key. A key another pass
// wrote meanwhile fails the pass, naming the Secret, and is kept; a
// deleting object whose namespace is being deleted (it refuses new
// Secrets) keeps its key for the pass only.
func TestPlanKeyChore(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	e := &Engine{Client: env.Client, APIReader: env.Client}
	passOver := func(t *testing.T, obj *infrav1.TerraformCluster) *pass {
		t.Helper()
		p := &pass{e: e, role: role, obj: obj, w: role.View(obj), before: obj.DeepCopy()}
		if err := p.loadRecords(ctx); err != nil {
			t.Fatal(err)
		}
		if !p.inputs.unsaved || len(p.inputs.key) == 0 {
			t.Fatalf("an object without a plan key: key of %d bytes, unsaved %v; want one made in memory", len(p.inputs.key), p.inputs.unsaved)
		}
		return p
	}
	keyOf := func(ns string) (*corev1.Secret, error) {
		s := &corev1.Secret{}
		return s, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: records.PlanKeyName(role.Kind(), "c")}, s)
	}

	t.Run("written as made", func(t *testing.T) {
		p := passOver(t, newCluster(t, "plankey-chore", "c", role.Finalizer()))
		if _, err := keyOf("plankey-chore"); !apierrors.IsNotFound(err) {
			t.Fatalf("the plan key was written before deciding: %v", err)
		}
		if err := p.doChores(ctx, decide.Chores(p.choreSnapshot(false))); err != nil {
			t.Fatal(err)
		}
		key, err := keyOf("plankey-chore")
		if err != nil {
			t.Fatalf("the chore wrote no plan key: %v", err)
		}
		if string(key.Data[records.PlanKeyData]) != string(p.inputs.key) || p.inputs.unsaved {
			t.Error("the written plan key is not the one the pass keyed its hashes with")
		}
		_ = protection.Release(ctx, env.Client, key)
	})
	t.Run("made by another pass meanwhile", func(t *testing.T) {
		p := passOver(t, newCluster(t, "plankey-race", "c", role.Finalizer()))
		other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "plankey-race", Name: records.PlanKeyName(role.Kind(), "c")},
			Data: map[string][]byte{records.PlanKeyData: []byte("0123456789abcdef0123456789abcdef")}}
		if err := env.Client.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		err := p.doChores(ctx, decide.Chores(p.choreSnapshot(false)))
		if err == nil || !strings.Contains(err.Error(), other.Name) {
			t.Fatalf("the chore over a key made meanwhile: %v; want the pass failed, naming %s", err, other.Name)
		}
		if key, err := keyOf("plankey-race"); err != nil || string(key.Data[records.PlanKeyData]) != string(other.Data[records.PlanKeyData]) {
			t.Errorf("the key made meanwhile: %v; want it kept as written", err)
		}
	})
	t.Run("refused by a namespace being deleted", func(t *testing.T) {
		obj := newCluster(t, "plankey-terminating", "c", role.Finalizer())
		if err := env.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plankey-terminating"}}); err != nil {
			t.Fatal(err)
		}
		deleting := &infrav1.TerraformCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), deleting); err != nil {
			t.Fatal(err)
		}
		p := passOver(t, deleting)
		if err := p.doChores(ctx, decide.Chores(p.choreSnapshot(true))); err != nil {
			t.Fatalf("a deleting object's chores in a namespace being deleted: %v; want its plan key kept for the pass", err)
		}
		if !p.inputs.ephemeral || p.inputs.unsaved {
			t.Errorf("the refused plan key: ephemeral %v, unsaved %v; want it the pass's only", p.inputs.ephemeral, p.inputs.unsaved)
		}
		if _, err := keyOf("plankey-terminating"); !apierrors.IsNotFound(err) {
			t.Errorf("a plan key in the namespace being deleted: %v", err)
		}
		// A pass that read the namespace as being deleted knows before
		// keying anything that the key is its own only.
		read := &pass{e: e, role: role, obj: deleting, w: role.View(deleting), before: deleting.DeepCopy(), nsTerminating: true}
		if err := read.loadRecords(ctx); err != nil {
			t.Fatal(err)
		}
		if !read.inputs.ephemeral || read.inputs.unsaved || len(read.inputs.key) == 0 {
			t.Errorf("a pass that read its namespace as being deleted: key of %d bytes, ephemeral %v, unsaved %v; want a key for the pass only, nothing to write",
				len(read.inputs.key), read.inputs.ephemeral, read.inputs.unsaved)
		}
	})
}
