package webhooks_test

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// grantIdentityAdmin lets group manage identities, but not read Secrets.
func grantIdentityAdmin(t *testing.T, group string) {
	t.Helper()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: group},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{infrav1.GroupVersion.Group}, Resources: []string{"terraformclusteridentities"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: group},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: group},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := admin.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// grantSecretGet lets user get one Secret; the returned binding revokes it.
func grantSecretGet(t *testing.T, user, ns, secret string) *rbacv1.RoleBinding {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-" + secret},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{secret}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user + "-reads-" + secret},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := admin.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	return binding
}

// updateIdentity reads the identity, changes it and updates it as c,
// retrying on a conflict: the identity controller writes status in between,
// and what the tests check is the webhook's answer.
func updateIdentity(ctx context.Context, c client.Client, key client.ObjectKey, change func(*infrav1.TerraformClusterIdentity)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := &infrav1.TerraformClusterIdentity{}
		if err := c.Get(ctx, key, current); err != nil {
			return err
		}
		change(current)
		return c.Update(ctx, current)
	})
}

func TestIdentityAuthorMustBeAbleToGetTheSecret(t *testing.T) {
	require(t)
	ctx := t.Context()
	grantIdentityAdmin(t, "identity-admins")
	system := namespace(t, "system")
	tenant, tenant2 := namespace(t, "tenant"), namespace(t, "tenant")
	sourceSecret(t, system, "aws-creds")
	alice := userClient(t, "alice", "identity-admins")
	bob := userClient(t, "bob", "identity-admins")
	aliceBinding := grantSecretGet(t, "alice", system, "aws-creds")

	t.Run("a user without get on the Secret cannot create the identity", func(t *testing.T) {
		err := bob.Create(ctx, identityObject("bobs", system, "aws-creds", tenant))
		rejected(t, err, isInvalid, "spec.secretRef", fmt.Sprintf(`user "bob" may not get Secret %s/aws-creds`, system))
	})

	id := identityObject("alices", system, "aws-creds", tenant)
	t.Run("a user with get on the Secret can", func(t *testing.T) {
		if err := eventually(t, func() error { return alice.Create(ctx, id) }); err != nil {
			t.Fatalf("alice, who may get the Secret, could not create the identity: %v", err)
		}
	})

	t.Run("pointing an identity at another Secret re-runs the check", func(t *testing.T) {
		sourceSecret(t, system, "other-creds")
		err := updateIdentity(ctx, alice, client.ObjectKeyFromObject(id), func(i *infrav1.TerraformClusterIdentity) {
			i.Spec.SecretRef.Name = "other-creds"
		})
		rejected(t, err, isInvalid, fmt.Sprintf(`user "alice" may not get Secret %s/other-creds`, system))
	})

	if err := admin.Delete(ctx, aliceBinding); err != nil {
		t.Fatal(err)
	}
	t.Run("a user who lost the right cannot widen allowedNamespaces", func(t *testing.T) {
		widen := func(i *infrav1.TerraformClusterIdentity) {
			i.Spec.AllowedNamespaces.List = append(i.Spec.AllowedNamespaces.List, tenant2)
		}
		// RBAC changes reach the authorizer within moments: wait for the
		// first refusal, then check it.
		err := eventually(t, func() error {
			if err := updateIdentity(ctx, alice, client.ObjectKeyFromObject(id), widen); err != nil {
				return nil // refused, as wanted; checked below
			}
			return fmt.Errorf("the widening was accepted")
		})
		if err != nil {
			t.Fatal(err)
		}
		rejected(t, updateIdentity(ctx, alice, client.ObjectKeyFromObject(id), widen), isInvalid,
			fmt.Sprintf(`user "alice" may not get Secret %s/aws-creds`, system))
		rejected(t, updateIdentity(ctx, alice, client.ObjectKeyFromObject(id), func(i *infrav1.TerraformClusterIdentity) {
			i.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"none": "x"}}}
		}), isInvalid, `user "alice"`)
	})

	t.Run("a metadata-only update by that user passes", func(t *testing.T) {
		if err := updateIdentity(ctx, alice, client.ObjectKeyFromObject(id), func(i *infrav1.TerraformClusterIdentity) {
			i.Labels = map[string]string{"team": "platform"}
		}); err != nil {
			t.Fatalf("a label change was refused: %v", err)
		}
	})

	t.Run("an admin who may get the Secret can widen", func(t *testing.T) {
		if err := updateIdentity(ctx, admin, client.ObjectKeyFromObject(id), func(i *infrav1.TerraformClusterIdentity) {
			i.Spec.AllowedNamespaces.List = append(i.Spec.AllowedNamespaces.List, tenant2)
		}); err != nil {
			t.Fatalf("the admin's widening was refused: %v", err)
		}
	})
}

func TestIdentityBadInputNamesTheField(t *testing.T) {
	require(t)
	testCases := []struct {
		name string
		id   *infrav1.TerraformClusterIdentity
		want []string
	}{
		{"allowedNamespaces {}", func() *infrav1.TerraformClusterIdentity {
			id := identityObject("empty-allowed", "captf-system", "creds")
			id.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{}
			return id
		}(), []string{"spec.allowedNamespaces", "selector: {}"}},
		{"selector that does not parse", func() *infrav1.TerraformClusterIdentity {
			id := identityObject("bad-selector", "captf-system", "creds")
			id.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenant", Operator: "Resembles"}},
			}}
			return id
		}(), []string{"spec.allowedNamespaces.selector.matchExpressions[0].operator"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			rejected(t, admin.Create(t.Context(), tc.id), isInvalid, tc.want...)
		})
	}
}
