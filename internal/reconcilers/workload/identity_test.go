package workload

import (
	"context"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

// createAll creates the namespaces, then objs, on the API server.
func createAll(t *testing.T, namespaces []string, objs ...client.Object) {
	t.Helper()
	for _, ns := range namespaces {
		objs = append([]client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}}, objs...)
	}
	for _, o := range objs {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// clusterMember is the metadata of namespace/name, labelled as a member
// of cluster.
func clusterMember(ns, name, cluster string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{infrav1.ClusterNameLabel: cluster}}
}

// An identity's spec change wakes, on the real API server's objects,
// every object that uses it: those naming it in spec.identityRef, and the
// machines and pools naming none whose TerraformCluster hands it down in
// spec.defaults.identityRef; nothing else.
func TestIdentityUsers(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	ref := func(name string) *infrav1.IdentityReference { return &infrav1.IdentityReference{Name: name} }
	meta := clusterMember
	source := infrav1.SourceSpec{Image: "local/noop:tofu"}
	objs := []client.Object{
		&infrav1.TerraformCluster{ObjectMeta: meta("team-a", "a", "a"), Spec: infrav1.TerraformClusterSpec{Source: source, IdentityRef: ref("shared")}},
		&infrav1.TerraformCluster{ObjectMeta: meta("team-b", "b", "b"), Spec: infrav1.TerraformClusterSpec{Source: source, IdentityRef: ref("other"),
			Defaults: &infrav1.ClusterDefaults{IdentityRef: ref("shared")}}},
		&infrav1.TerraformCluster{ObjectMeta: meta("team-b", "c", "c"), Spec: infrav1.TerraformClusterSpec{Source: source, IdentityRef: ref("other")}},
		&infrav1.TerraformMachine{ObjectMeta: meta("team-b", "b-inherits", "b"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachine{ObjectMeta: meta("team-b", "b-own", "b"), Spec: infrav1.TerraformMachineSpec{Source: source, IdentityRef: ref("other")}},
		&infrav1.TerraformMachine{ObjectMeta: meta("team-a", "a-names-it", "a"), Spec: infrav1.TerraformMachineSpec{Source: source, IdentityRef: ref("shared")}},
		&infrav1.TerraformMachine{ObjectMeta: meta("team-b", "c-inherits", "c"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachinePool{ObjectMeta: meta("team-b", "b-pool", "b"), Spec: infrav1.TerraformMachinePoolSpec{Source: source}},
	}
	createAll(t, []string{"team-a", "team-b"}, objs...)
	identity := &infrav1.TerraformClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}
	testCases := []struct {
		role roles.Role
		list client.ObjectList
		want []string
	}{
		{roles.Cluster{}, &infrav1.TerraformClusterList{}, []string{"team-a/a"}},
		{roles.Machine{}, &infrav1.TerraformMachineList{}, []string{"team-a/a-names-it", "team-b/b-inherits"}},
		{roles.MachinePool{}, &infrav1.TerraformMachinePoolList{}, []string{"team-b/b-pool"}},
	}
	for _, tc := range testCases {
		t.Run(tc.role.Kind(), func(t *testing.T) {
			var got []string
			for _, r := range identityUsers(env.Client, tc.role, tc.list)(ctx, identity) {
				got = append(got, r.String())
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("woken %v, want %v", got, tc.want)
			}
		})
	}
}
