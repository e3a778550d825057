package webhooks_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func envVars(names ...string) *infrav1.JobsSpec {
	j := &infrav1.JobsSpec{}
	for _, n := range names {
		j.Env = append(j.Env, corev1.EnvVar{Name: n, Value: "x"})
	}
	return j
}

func TestRunnerOwnedEnvNamesAreRejected(t *testing.T) {
	require(t)
	ns := namespace(t, "env")
	src := infrav1.SourceSpec{Image: "registry.example/modules/noop:v1"}
	c := clusterObject(ns, "c", &infrav1.IdentityReference{Name: "aws"})
	c.Spec.Jobs = envVars("HTTPS_PROXY", "TF_LOG", "KUBE_CONFIG_PATH")
	c.Spec.Defaults = &infrav1.ClusterDefaults{Jobs: envVars("TF_VAR_region")}
	testCases := []struct {
		name string
		obj  client.Object
		want []string
	}{
		{"TerraformCluster", c, []string{"spec.jobs.env[1].name", "spec.jobs.env[2].name", "spec.defaults.jobs.env[0].name", "the runner owns them"}},
		{"TerraformMachine", &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"},
			Spec: infrav1.TerraformMachineSpec{Source: src, Jobs: envVars("A", "B", "TF_WORKSPACE")}}, []string{"spec.jobs.env[2].name"}},
		{"TerraformMachinePool", &infrav1.TerraformMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"},
			Spec: infrav1.TerraformMachinePoolSpec{Source: src, Jobs: envVars("KUBE_NAMESPACE")}}, []string{"spec.jobs.env[0].name"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			rejected(t, admin.Create(t.Context(), tc.obj), isInvalid, tc.want...)
		})
	}

	t.Run("an update adding a reserved name is rejected", func(t *testing.T) {
		ok := clusterObject(ns, "ok", &infrav1.IdentityReference{Name: "aws"})
		ok.Spec.Jobs = envVars("HTTPS_PROXY")
		if err := admin.Create(t.Context(), ok); err != nil {
			t.Fatal(err)
		}
		ok.Spec.Jobs.Env = append(ok.Spec.Jobs.Env, corev1.EnvVar{Name: "TF_INPUT", Value: "1"})
		rejected(t, admin.Update(t.Context(), ok), isInvalid, "spec.jobs.env[1].name")
	})
}
