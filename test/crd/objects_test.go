package crd_test

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Builders of minimal valid objects: each test mutates a fresh copy.

const ns = "default"

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns}
}

func source() infrav1.SourceSpec {
	return infrav1.SourceSpec{Image: "registry.example/modules/noop:v1"}
}

func cluster(name string) *infrav1.TerraformCluster {
	return &infrav1.TerraformCluster{
		ObjectMeta: meta(name),
		Spec: infrav1.TerraformClusterSpec{
			Source:      source(),
			IdentityRef: &infrav1.IdentityReference{Name: "cloud"},
		},
	}
}

func machine(name string) *infrav1.TerraformMachine {
	return &infrav1.TerraformMachine{
		ObjectMeta: meta(name),
		Spec:       infrav1.TerraformMachineSpec{Source: source()},
	}
}

func pool(name string) *infrav1.TerraformMachinePool {
	return &infrav1.TerraformMachinePool{
		ObjectMeta: meta(name),
		Spec:       infrav1.TerraformMachinePoolSpec{Source: source()},
	}
}

func clusterTemplate(name string) *infrav1.TerraformClusterTemplate {
	return &infrav1.TerraformClusterTemplate{
		ObjectMeta: meta(name),
		Spec: infrav1.TerraformClusterTemplateSpec{
			Template: infrav1.TerraformClusterTemplateResource{Spec: infrav1.TerraformClusterSpec{Source: source()}},
		},
	}
}

func machineTemplate(name string) *infrav1.TerraformMachineTemplate {
	return &infrav1.TerraformMachineTemplate{
		ObjectMeta: meta(name),
		Spec: infrav1.TerraformMachineTemplateSpec{
			Template: infrav1.TerraformMachineTemplateResource{Spec: infrav1.TerraformMachineSpec{Source: source()}},
		},
	}
}

func poolTemplate(name string) *infrav1.TerraformMachinePoolTemplate {
	return &infrav1.TerraformMachinePoolTemplate{
		ObjectMeta: meta(name),
		Spec: infrav1.TerraformMachinePoolTemplateSpec{
			Template: infrav1.TerraformMachinePoolTemplateResource{Spec: infrav1.TerraformMachinePoolSpec{Source: source()}},
		},
	}
}

func identity(name string) *infrav1.TerraformClusterIdentity {
	return &infrav1.TerraformClusterIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: infrav1.TerraformClusterIdentitySpec{
			SecretRef: infrav1.SecretReference{Name: "cloud-credentials", Namespace: "captf-system"},
		},
	}
}

func plan(name string) *infrav1.TerraformPlan {
	return &infrav1.TerraformPlan{
		ObjectMeta: meta(name),
		Spec: infrav1.TerraformPlanSpec{
			TargetRef:  infrav1.PlanTargetReference{Kind: "TerraformCluster", Name: "prod"},
			PlanHash:   "p2:3b1f0c",
			InputsHash: "h2:9ad1e2",
			Reason:     infrav1.PlanReasonDestructive,
			Summary:    infrav1.PlanSummary{Replace: 1, Resources: []string{"null_resource.vip (replace)"}},
		},
	}
}

func jobs(deadline *int64, lock *int32) *infrav1.JobsSpec {
	return &infrav1.JobsSpec{ActiveDeadlineSeconds: deadline, LockTimeoutSeconds: lock}
}

func vars(raw string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(raw)} }

func longName(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a'
	}
	return string(b)
}

// minimalObjects is one minimal valid object of every kind.
func minimalObjects() []client.Object {
	return []client.Object{
		cluster("min-cluster"),
		machine("min-machine"),
		pool("min-pool"),
		clusterTemplate("min-cluster-template"),
		machineTemplate("min-machine-template"),
		poolTemplate("min-pool-template"),
		identity("min-identity"),
		plan("min-plan"),
	}
}
