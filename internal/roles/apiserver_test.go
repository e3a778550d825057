package roles_test

import (
	"os"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// env is the real API server the roles read from.
var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

// TestDependents: a deleting cluster waits for the machines and pools
// labelled with its Cluster's name, machines first, and for no other
// cluster's nor another namespace's.
func TestDependents(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns, other := envtest.Namespace(t, env.Client, "dependents"), envtest.Namespace(t, env.Client, "dependents")
	meta := func(ns, name, cluster string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{infrav1.ClusterNameLabel: cluster}}
	}
	source := infrav1.SourceSpec{Image: "example.test/module:1"}
	for _, o := range []client.Object{
		&infrav1.TerraformMachinePool{ObjectMeta: meta(ns, "pool-0", "demo"), Spec: infrav1.TerraformMachinePoolSpec{Source: source}},
		&infrav1.TerraformMachine{ObjectMeta: meta(ns, "m-1", "demo"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachine{ObjectMeta: meta(ns, "m-0", "demo"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachine{ObjectMeta: meta(ns, "n-0", "another"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachine{ObjectMeta: meta(other, "o-0", "demo"), Spec: infrav1.TerraformMachineSpec{Source: source}},
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	got, err := roles.Dependents(ctx, env.Client, ns, "demo")
	want := []string{"TerraformMachine m-0", "TerraformMachine m-1", "TerraformMachinePool pool-0"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Dependents(demo) = %q, %v; want %q", got, err, want)
	}
	if got, err := roles.Dependents(ctx, env.Client, ns, "gone"); err != nil || len(got) != 0 {
		t.Errorf("Dependents of a cluster with none = %q, %v; want none", got, err)
	}
}
