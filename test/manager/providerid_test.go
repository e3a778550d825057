package manager_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Only the manager writes a machine's providerID (from the module's
// provider_id output): Cluster API copies it to the Machine and Node.
func TestOnlyTheManagerSetsProviderID(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	m := terraformMachine(t, "pid", nil)
	setProviderID := func(c client.Client) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &infrav1.TerraformMachine{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(m), cur); err != nil {
				return err
			}
			cur.Spec.ProviderID = "noop://default/pid/1"
			return c.Update(ctx, cur)
		})
	}
	err := setProviderID(env.Client)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.providerID") || !strings.Contains(err.Error(), "only the CAPTF manager") {
		t.Fatalf("want an admin's providerID write refused, got %v", err)
	}
	cfg, err := env.ControlPlane.AddUser("system:serviceaccount:"+managerNamespace+":"+managerAccount, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	manager, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := setProviderID(manager); err != nil {
		t.Fatalf("the manager's providerID write was refused: %v", err)
	}
}
