package webhooks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
)

func createIdentity(t *testing.T, id *infrav1.TerraformClusterIdentity) {
	t.Helper()
	if err := admin.Create(t.Context(), id); err != nil {
		t.Fatalf("creating identity %s: %v", id.Name, err)
	}
}

func TestDeletingAnIdentityInUseIsRefused(t *testing.T) {
	require(t)
	ctx := t.Context()
	system, tenant := namespace(t, "system"), namespace(t, "tenant")
	sourceSecret(t, system, "aws-creds")

	t.Run("used by a TerraformCluster", func(t *testing.T) {
		createIdentity(t, identityObject("used-by-cluster", system, "aws-creds", tenant))
		c := clusterObject(tenant, "prod", &infrav1.IdentityReference{Name: "used-by-cluster"})
		if err := admin.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		err := admin.Delete(ctx, &infrav1.TerraformClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "used-by-cluster"}})
		rejected(t, err, isForbidden, fmt.Sprintf("TerraformCluster %s/prod uses it", tenant))
	})

	t.Run("used by a machine through its cluster's defaults", func(t *testing.T) {
		createIdentity(t, identityObject("machine-default", system, "aws-creds", tenant))
		c := clusterObject(tenant, "with-defaults", &infrav1.IdentityReference{Name: "used-by-cluster"})
		c.Spec.Defaults = &infrav1.ClusterDefaults{IdentityRef: &infrav1.IdentityReference{Name: "machine-default"}}
		if err := admin.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		m := &infrav1.TerraformMachine{
			ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "worker-0", Labels: map[string]string{infrav1.ClusterNameLabel: "with-defaults"}},
			Spec:       infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: "registry.example/modules/noop:v1"}},
		}
		if err := admin.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		unused := &infrav1.TerraformClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "machine-default"}}
		rejected(t, admin.Delete(ctx, unused), isForbidden, fmt.Sprintf("TerraformMachine %s/worker-0 uses it", tenant))

		if err := admin.Delete(ctx, m); err != nil {
			t.Fatal(err)
		}
		if err := admin.Delete(ctx, unused); err != nil {
			t.Fatalf("deleting the identity nothing resolves to any more: %v", err)
		}
	})

	t.Run("still listing namespaces in status", func(t *testing.T) {
		id := identityObject("still-mirrored", system, "aws-creds", tenant)
		createIdentity(t, id)
		user := clusterObject(tenant, "gone-soon", &infrav1.IdentityReference{Name: id.Name})
		if err := admin.Create(ctx, user); err != nil {
			t.Fatal(err)
		}
		res, err := credentials.EnsureMirror(ctx, admin, admin, id, user)
		if err != nil || res.Outcome != credentials.OutcomeCreated {
			t.Fatalf("EnsureMirror = %+v, %v", res, err)
		}
		recordConditions(t, user, credentials.Check{IdentityName: id.Name, IdentityFound: true, Namespace: tenant, Allowed: true, AllowedMessage: "listed", Mirror: res})
		// The object goes, but its mirror still holds a reference to it
		// (no garbage collector runs here): status.namespaces keeps the
		// namespace, and the delete must wait.
		if err := admin.Delete(ctx, user); err != nil {
			t.Fatal(err)
		}
		waitNamespaces(t, id.Name, []string{tenant})
		rejected(t, admin.Delete(ctx, id), isForbidden, "still mirrored into namespaces "+tenant)

		if res, err := credentials.ReleaseMirror(ctx, admin, tenant, id.Name, user); err != nil || res.Outcome != credentials.OutcomeRemoved {
			t.Fatalf("ReleaseMirror = %+v, %v", res, err)
		}
		waitNamespaces(t, id.Name, nil)
		if err := admin.Delete(ctx, id); err != nil {
			t.Fatalf("deleting an identity no longer in use: %v", err)
		}
	})
}

// recordConditions writes the identity conditions of a workload object to
// its status and emits its mirror event, as the workload reconciler will;
// the final scan checks them.
func recordConditions(t *testing.T, obj *infrav1.TerraformCluster, ch credentials.Check) {
	t.Helper()
	meta.SetStatusCondition(&obj.Status.Conditions, credentials.IdentityAllowedCondition(ch))
	meta.SetStatusCondition(&obj.Status.Conditions, credentials.CredentialsMirroredCondition(ch))
	if err := admin.Status().Update(t.Context(), obj); err != nil {
		t.Fatalf("writing status: %v", err)
	}
	if reason, note, ok := ch.Mirror.Event(); ok {
		mgr.GetEventRecorder("captf-manager").Eventf(obj, nil, "Normal", reason, "Mirror", "%s", note)
	}
}

func waitNamespaces(t *testing.T, identity string, want []string) {
	t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		id := &infrav1.TerraformClusterIdentity{}
		if err := admin.Get(t.Context(), client.ObjectKey{Name: identity}, id); err != nil {
			return false, err
		}
		got = id.Status.Namespaces
		return fmt.Sprint(got) == fmt.Sprint(want), nil
	})
	if err != nil {
		t.Fatalf("status.namespaces of %s = %v, want %v: %v", identity, got, want, err)
	}
}
