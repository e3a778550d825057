package workspace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// newCluster creates the namespace ns and, in it, the TerraformCluster
// name (of a cluster module image, identity "cloud", with finalizers).
func newCluster(t *testing.T, ns, name string, finalizers ...string) *infrav1.TerraformCluster {
	t.Helper()
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: finalizers},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "example.test/cluster:1"}, IdentityRef: &infrav1.IdentityReference{Name: "cloud"}}}
	if err := env.Client.Create(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	return tc
}
