package identity

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/protection"
)

// maxNamespaces bounds status.namespaces (the CRD's MaxItems).
const maxNamespaces = 1000

// snapshot is everything one reconcile observed.
type snapshot struct {
	identity *infrav1.TerraformClusterIdentity
	// source is the source Secret, nil when it does not exist.
	source *corev1.Secret
	// mirrors are the metadata of every Secret labelled captf.io/mirrored=true.
	mirrors []metav1.PartialObjectMetadata
}

// readyCondition computes Ready from the snapshot. Messages name the Secret
// and key names, never values.
func readyCondition(s snapshot) metav1.Condition {
	ref := types.NamespacedName{Namespace: s.identity.Spec.SecretRef.Namespace, Name: s.identity.Spec.SecretRef.Name}
	cond := metav1.Condition{Type: infrav1.ReadyCondition, ObservedGeneration: s.identity.Generation}
	if s.source == nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, infrav1.SecretNotFoundReason
		cond.Message = ref.String()
		return cond
	}
	if missing := credentials.MissingKeys(s.identity.Spec.RequiredKeys, s.source.Data); len(missing) > 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, infrav1.CredentialsIncompleteReason
		cond.Message = fmt.Sprintf("Secret %s lacks the required keys %s; add them or remove them from spec.requiredKeys", ref, strings.Join(missing, ", "))
		return cond
	}
	cond.Status, cond.Reason = metav1.ConditionTrue, infrav1.SecretFoundReason
	cond.Message = fmt.Sprintf("Secret %s has every required key", ref)
	return cond
}

// usedNamespaces returns the sorted namespaces holding a correctly named,
// labelled and annotated mirror of the identity with at least one owner
// reference, unless it is being deleted without CAPTF's protection (a
// protected mirror being deleted still serves a destroy).
func usedNamespaces(s snapshot) []string {
	name := credentials.MirrorName(s.identity.Name)
	var out []string
	for i := range s.mirrors {
		m := &s.mirrors[i]
		if m.Name != name || m.Labels[infrav1.MirroredLabel] != "true" || m.Labels[infrav1.ManagedLabel] != "true" ||
			m.Annotations[infrav1.IdentityAnnotation] != s.identity.Name || m.Annotations[infrav1.SourceHashAnnotation] == "" ||
			len(m.OwnerReferences) == 0 || (m.DeletionTimestamp != nil && !protection.Protected(m)) {
			continue
		}
		out = append(out, m.Namespace)
	}
	sort.Strings(out)
	if len(out) > maxNamespaces {
		out = out[:maxNamespaces]
	}
	return out
}
