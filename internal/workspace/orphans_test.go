package workspace

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// TestStalePassLeavesNothingProtected: two managers (or a pass that read
// the object just before its release) race on a deleting TerraformCluster.
// The release deleted the plan key and released the state backups (they
// go with the object); the pass that read the object still deleting makes
// the key again and protects the backups again, after the object is gone.
// The garbage collector deletes them, and their protection must not hold
// them (and so the namespace) for ever: the pass the object's delete event
// brings finds the object gone and releases them. What is retained stays
// protected, and so does what an object of the same name made since owns;
// so does everything when the object's finalizer was stripped by hand
// (its state or records are left: they are its user's to read).
func TestStalePassLeavesNothingProtected(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	e := &Engine{Client: env.Client, APIReader: env.Client}
	for _, tc := range []struct {
		name, ns string
		// then changes what the stale pass left before the next pass.
		then     func(t *testing.T, ns string, gone *infrav1.TerraformCluster)
		wantKept bool
	}{
		{name: "made or protected by a stale pass", ns: "stale-made"},
		{name: "retained with the state", ns: "stale-retained", wantKept: true, then: func(t *testing.T, ns string, gone *infrav1.TerraformCluster) {
			for _, s := range staleSecrets(t, ns) {
				s.Labels[infrav1.RetainedFromUIDLabel] = string(gone.UID)
				if err := env.Client.Update(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{name: "the object's finalizer stripped by hand: its records stay", ns: "stale-stripped-records", wantKept: true,
			then: func(t *testing.T, ns string, gone *infrav1.TerraformCluster) {
				left(t, ns, gone, records.AttemptName(role.Kind(), "c"), nil)
			}},
		{name: "the object's finalizer stripped by hand: its state stays", ns: "stale-stripped-state", wantKept: true,
			then: func(t *testing.T, ns string, gone *infrav1.TerraformCluster) {
				suffix, err := state.Suffix(ns, role.Kind(), "c")
				if err != nil {
					t.Fatal(err)
				}
				left(t, ns, gone, state.SecretName(suffix), state.Selector(suffix))
			}},
		{name: "owned by an object of the same name made since", ns: "stale-recreated", wantKept: true, then: func(t *testing.T, ns string, gone *infrav1.TerraformCluster) {
			again := cluster(ns)
			if err := env.Client.Create(ctx, again); err != nil {
				t.Fatal(err)
			}
			for _, s := range staleSecrets(t, ns) {
				s.OwnerReferences = []metav1.OwnerReference{records.OwnerReference(again, role.Kind())}
				if err := env.Client.Update(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := tc.ns
			if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				t.Fatal(err)
			}
			gone := staleRelease(t, ctx, e, ns)
			var err error
			if tc.then != nil {
				tc.then(t, ns, gone)
			}
			// The garbage collector deletes them: their owner is gone.
			for _, s := range staleSecrets(t, ns) {
				if err := env.Client.Delete(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			// The pass the object's delete event brings: it finds the object
			// gone (one of the same name made right after that is read again
			// only before releasing).
			key := client.ObjectKey{Namespace: ns, Name: "c"}
			if tc.ns == "stale-recreated" {
				err = e.releaseOrphans(ctx, role, key)
			} else {
				_, err = e.Reconcile(ctx, role, key)
			}
			if err != nil {
				t.Fatal(err)
			}
			left := staleSecrets(t, ns)
			switch {
			case tc.wantKept && len(left) != 2:
				t.Errorf("%d of the plan key and the backup are left, want both, protected", len(left))
			case !tc.wantKept && len(left) != 0:
				t.Errorf("%s is left with finalizers %v; want it gone (it holds namespace %s's deletion)", left[0].Name, left[0].Finalizers, ns)
			}
			for _, s := range left {
				if !protection.Protected(s) {
					t.Errorf("%s lost its protection", s.Name)
				}
				_ = protection.Release(ctx, env.Client, s)
			}
		})
	}
}

// left makes Secret name in ns, owned by gone and protected, with the
// labels of selector: what an object whose finalizer was stripped by hand
// leaves.
func left(t *testing.T, ns string, gone *infrav1.TerraformCluster, name string, selector labels.Selector) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: []string{protection.Finalizer},
		OwnerReferences: []metav1.OwnerReference{records.OwnerReference(gone, roles.Cluster{}.Kind())}}}
	if selector != nil {
		set, err := labels.ConvertSelectorToLabelsMap(selector.String())
		if err != nil {
			t.Fatal(err)
		}
		s.Labels = set
	}
	if err := env.Client.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = protection.Release(context.WithoutCancel(t.Context()), env.Client, s) })
}

func cluster(ns string) *infrav1.TerraformCluster {
	return &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c", Finalizers: []string{roles.Cluster{}.Finalizer()}},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "example.test/cluster:1"}, IdentityRef: &infrav1.IdentityReference{Name: "cloud"}}}
}

// staleRelease makes TerraformCluster c in ns with a released state
// backup, deletes it, releases it as another manager would, and then runs
// the stale pass: the one that read it deleting, before the release. It
// returns the object as that pass read it.
func staleRelease(t *testing.T, ctx context.Context, e *Engine, ns string) *infrav1.TerraformCluster {
	t.Helper()
	role := roles.Cluster{}
	obj := cluster(ns)
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	suffix, err := state.Suffix(ns, role.Kind(), "c")
	if err != nil {
		t.Fatal(err)
	}
	backup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backup-c-1", Labels: backupSetsOf(suffix),
		OwnerReferences: []metav1.OwnerReference{records.OwnerReference(obj, role.Kind())}}}
	if err := env.Client.Create(ctx, backup); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, obj); err != nil {
		t.Fatal(err)
	}
	stale := &infrav1.TerraformCluster{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), stale); err != nil {
		t.Fatal(err)
	}
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
	if err := p.protectDeleting(ctx); err != nil {
		t.Fatal(err)
	}
	if left := staleSecrets(t, ns); len(left) != 2 || !protection.Protected(left[0]) || !protection.Protected(left[1]) {
		t.Fatalf("the stale pass left %d protected Secrets, want the plan key and the backup: the race this test is about did not happen", len(left))
	}
	return stale
}

// staleSecrets are the plan key and the backup of c in ns that exist.
func staleSecrets(t *testing.T, ns string) []*corev1.Secret {
	t.Helper()
	var out []*corev1.Secret
	for _, name := range []string{records.PlanKeyName("TerraformCluster", "c"), "backup-c-1"} {
		s := &corev1.Secret{}
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, s)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
