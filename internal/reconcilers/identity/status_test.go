package identity

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestReadyCondition(t *testing.T) {
	id := &infrav1.TerraformClusterIdentity{Spec: infrav1.TerraformClusterIdentitySpec{
		SecretRef:    infrav1.SecretReference{Namespace: "captf-system", Name: "aws"},
		RequiredKeys: []string{"B", "A", "EMPTY"},
	}}
	testCases := []struct {
		name   string
		source *corev1.Secret
		status metav1.ConditionStatus
		reason string
		says   string
	}{
		{"missing Secret", nil, metav1.ConditionFalse, infrav1.SecretNotFoundReason, "captf-system/aws"},
		{"missing keys", &corev1.Secret{Data: map[string][]byte{"EMPTY": {}}}, metav1.ConditionFalse, infrav1.CredentialsIncompleteReason, "A, B"},
		{"complete (empty value counts)", &corev1.Secret{Data: map[string][]byte{"A": []byte("x"), "B": []byte("y"), "EMPTY": {}}},
			metav1.ConditionTrue, infrav1.SecretFoundReason, "captf-system/aws"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := readyCondition(snapshot{identity: id, source: tc.source})
			if got.Type != infrav1.ReadyCondition || got.Status != tc.status || got.Reason != tc.reason || !strings.Contains(got.Message, tc.says) {
				t.Fatalf("Ready = %s/%s %q; want %s/%s naming %q", got.Status, got.Reason, got.Message, tc.status, tc.reason, tc.says)
			}
		})
	}
	if got := readyCondition(snapshot{identity: id, source: nil}); got.Message != "captf-system/aws" {
		t.Errorf("SecretNotFound message = %q; want exactly namespace/name", got.Message)
	}
}

func TestUsedNamespaces(t *testing.T) {
	id := &infrav1.TerraformClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "aws"}}
	owner := []metav1.OwnerReference{{Kind: "TerraformCluster", Name: "c", UID: "1"}}
	mirror := func(ns, name string, labels, annotations map[string]string, owners []metav1.OwnerReference) metav1.PartialObjectMetadata {
		return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations, OwnerReferences: owners}}
	}
	good := map[string]string{infrav1.MirroredLabel: "true", infrav1.ManagedLabel: "true"}
	ann := map[string]string{infrav1.IdentityAnnotation: "aws", infrav1.SourceHashAnnotation: "abc"}
	snap := snapshot{identity: id, mirrors: []metav1.PartialObjectMetadata{
		mirror("zeta", "captf-creds-aws", good, ann, owner),
		mirror("alpha", "captf-creds-aws", good, ann, owner),
		mirror("no-owner", "captf-creds-aws", good, ann, nil),
		mirror("other-identity", "captf-creds-aws", good, map[string]string{infrav1.IdentityAnnotation: "gcp", infrav1.SourceHashAnnotation: "abc"}, owner),
		mirror("no-hash", "captf-creds-aws", good, map[string]string{infrav1.IdentityAnnotation: "aws"}, owner),
		mirror("not-managed", "captf-creds-aws", map[string]string{infrav1.MirroredLabel: "true"}, ann, owner),
		mirror("wrong-name", "captf-creds-gcp", good, ann, owner),
	}}
	if got := strings.Join(usedNamespaces(snap), ","); got != "alpha,zeta" {
		t.Fatalf("status.namespaces = %s; want alpha,zeta (sorted; only correct mirrors with an owner)", got)
	}
}
