package credentials

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Allowed says whether identity allows namespace, with a sentence saying
// why for the IdentityAllowed condition's message.
//
// spec.allowedNamespaces unset allows no namespace; list allows exactly the
// listed ones; selector allows the namespaces whose labels match; both allow
// the union. selector: {} allows every namespace, even one that does not
// exist yet. An invalid selector matches nothing, and a namespace that does
// not exist is never allowed otherwise. The namespace is read through
// reader, which must not be a cache (pass the manager's API reader), so a
// label change takes effect at once. A failed read is returned as the error;
// the caller reports IdentityAllowed=Unknown/IdentityCheckFailed and retries.
func Allowed(ctx context.Context, reader client.Reader, identity *infrav1.TerraformClusterIdentity, namespace string) (bool, string, error) {
	an := identity.Spec.AllowedNamespaces
	if an == nil {
		return false, fmt.Sprintf("TerraformClusterIdentity %s allows no namespace: spec.allowedNamespaces is unset; add namespace %q to spec.allowedNamespaces.list or match it with spec.allowedNamespaces.selector",
			identity.Name, namespace), nil
	}
	if an.Selector != nil && selectsEverything(an.Selector) {
		return true, fmt.Sprintf("TerraformClusterIdentity %s allows every namespace (spec.allowedNamespaces.selector is {})", identity.Name), nil
	}

	ns := &corev1.Namespace{}
	if err := reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return false, fmt.Sprintf("namespace %q does not exist, so TerraformClusterIdentity %s does not allow it", namespace, identity.Name), nil
		}
		return false, "", fmt.Errorf("reading namespace %q to check TerraformClusterIdentity %s: %w", namespace, identity.Name, err)
	}

	if slices.Contains(an.List, namespace) {
		return true, fmt.Sprintf("namespace %q is listed in spec.allowedNamespaces.list of TerraformClusterIdentity %s", namespace, identity.Name), nil
	}
	if an.Selector == nil {
		return false, notAllowed(identity.Name, namespace), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(an.Selector)
	if err != nil {
		return false, fmt.Sprintf("spec.allowedNamespaces.selector of TerraformClusterIdentity %s is invalid (%v), so it matches no namespace; fix the selector",
			identity.Name, err), nil
	}
	if sel.Matches(labels.Set(ns.Labels)) {
		return true, fmt.Sprintf("the labels of namespace %q match spec.allowedNamespaces.selector of TerraformClusterIdentity %s", namespace, identity.Name), nil
	}
	return false, notAllowed(identity.Name, namespace), nil
}

func notAllowed(identity, namespace string) string {
	return fmt.Sprintf("TerraformClusterIdentity %s does not allow namespace %q; add it to spec.allowedNamespaces.list or label it to match spec.allowedNamespaces.selector",
		identity, namespace)
}

// selectsEverything reports a selector with no requirement: selector: {}.
func selectsEverything(s *metav1.LabelSelector) bool {
	return len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}
