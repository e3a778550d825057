package webhooks

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestValidateIdentitySpec(t *testing.T) {
	valid := func() *infrav1.TerraformClusterIdentity {
		return &infrav1.TerraformClusterIdentity{
			ObjectMeta: metav1.ObjectMeta{Name: "aws"},
			Spec:       infrav1.TerraformClusterIdentitySpec{SecretRef: infrav1.SecretReference{Namespace: "captf-system", Name: "aws-creds"}},
		}
	}
	testCases := []struct {
		name   string
		mutate func(*infrav1.TerraformClusterIdentity)
		want   []string
	}{
		{"valid without allowedNamespaces", func(*infrav1.TerraformClusterIdentity) {}, nil},
		{"valid selector {}", func(id *infrav1.TerraformClusterIdentity) {
			id.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{}}
		}, nil},
		{"empty secretRef, all reported at once", func(id *infrav1.TerraformClusterIdentity) {
			id.Spec.SecretRef = infrav1.SecretReference{}
		}, []string{"spec.secretRef.name: Required value", "spec.secretRef.namespace: Required value"}},
		{"bad names", func(id *infrav1.TerraformClusterIdentity) {
			id.Spec.SecretRef = infrav1.SecretReference{Namespace: "Not_A_Label", Name: "UPPER"}
		}, []string{"spec.secretRef.name: Invalid value", "spec.secretRef.namespace: Invalid value"}},
		{"allowedNamespaces {} tells to write selector: {}", func(id *infrav1.TerraformClusterIdentity) {
			id.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{}
		}, []string{"spec.allowedNamespaces", "selector: {}"}},
		{"list items are DNS labels and unique", func(id *infrav1.TerraformClusterIdentity) {
			id.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{List: []string{"team-a", "Team_B", "team-a"}}
		}, []string{"spec.allowedNamespaces.list[1]: Invalid value", "spec.allowedNamespaces.list[2]: Duplicate value"}},
		{"selector must parse", func(id *infrav1.TerraformClusterIdentity) {
			id.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenant", Operator: "Resembles", Values: []string{"x"}}},
			}}
		}, []string{"spec.allowedNamespaces.selector.matchExpressions[0].operator"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			id := valid()
			tc.mutate(id)
			errs := validateIdentitySpec(id)
			if len(tc.want) == 0 {
				if len(errs) > 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			err := identityInvalid(id, errs)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid error, got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}
