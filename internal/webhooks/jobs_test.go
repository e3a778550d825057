package webhooks

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func env(names ...string) *infrav1.JobsSpec {
	j := &infrav1.JobsSpec{}
	for _, n := range names {
		j.Env = append(j.Env, corev1.EnvVar{Name: n, Value: "secret-ish-value"})
	}
	return j
}

func TestReservedEnvNames(t *testing.T) {
	testCases := []struct {
		name     string
		validate func() error
		want     []string
	}{
		{"cluster: both policies, every violation", func() error {
			c := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: infrav1.TerraformClusterSpec{
				Jobs:     env("OK", "TF_LOG", "KUBE_CONFIG_PATH"),
				Defaults: &infrav1.ClusterDefaults{Jobs: env("TF_VAR_region")},
			}}
			_, err := (&ClusterValidator{}).ValidateCreate(context.Background(), c)
			return err
		}, []string{"spec.jobs.env[1].name", "spec.jobs.env[2].name", "spec.defaults.jobs.env[0].name", "the runner owns them"}},
		{"cluster: allowed names", func() error {
			c := &infrav1.TerraformCluster{Spec: infrav1.TerraformClusterSpec{Jobs: env("HTTPS_PROXY", "tf_lower", "KUBERNETES")}}
			_, err := (&ClusterValidator{}).ValidateCreate(context.Background(), c)
			return err
		}, nil},
		{"cluster update: unchanged weaker policy passes", func() error {
			old := &infrav1.TerraformCluster{Spec: infrav1.TerraformClusterSpec{Jobs: env("TF_LOG")}}
			c := old.DeepCopy()
			c.Labels = map[string]string{"x": "y"}
			_, err := (&ClusterValidator{}).ValidateUpdate(context.Background(), old, c)
			return err
		}, nil},
		{"cluster update: changed policy is checked", func() error {
			old := &infrav1.TerraformCluster{}
			c := &infrav1.TerraformCluster{Spec: infrav1.TerraformClusterSpec{Defaults: &infrav1.ClusterDefaults{Jobs: env("A", "KUBE_X")}}}
			_, err := (&ClusterValidator{}).ValidateUpdate(context.Background(), old, c)
			return err
		}, []string{"spec.defaults.jobs.env[1].name"}},
		{"machine", func() error {
			_, err := (&MachineValidator{}).ValidateCreate(context.Background(), &infrav1.TerraformMachine{Spec: infrav1.TerraformMachineSpec{Jobs: env("TF_WORKSPACE")}})
			return err
		}, []string{"spec.jobs.env[0].name"}},
		{"machine update with new env", func() error {
			_, err := (&MachineValidator{}).ValidateUpdate(context.Background(), &infrav1.TerraformMachine{},
				&infrav1.TerraformMachine{Spec: infrav1.TerraformMachineSpec{Jobs: env("X", "TF_INPUT")}})
			return err
		}, []string{"spec.jobs.env[1].name"}},
		{"pool", func() error {
			_, err := (&MachinePoolValidator{}).ValidateCreate(context.Background(), &infrav1.TerraformMachinePool{Spec: infrav1.TerraformMachinePoolSpec{Jobs: env("KUBE_NAMESPACE")}})
			return err
		}, []string{"spec.jobs.env[0].name"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected rejection: %v", err)
				}
				return
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid error, got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not name %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "secret-ish-value") {
				t.Errorf("the error carries an env value:\n%v", err)
			}
		})
	}
}
