package jobs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

const (
	testNamespace   = "tenant-a"
	testImage       = "ghcr.io/captf-io/module-images/noop-cluster:v0.3.0"
	testRunnerImage = "ghcr.io/captf-io/captf:v0.2.0"
	testInputsHash  = "h2:7d865e959b2466918c9863afca942d0fb89d7c9ac0c99bafc3749504ded97730"
)

// buildCase is one run the builder is tested with: a golden file, the
// runner's flag parser, the pod checks and the real API server all see it.
type buildCase struct {
	name string
	spec Spec
}

// newSpec is a valid apply of a TerraformMachine; cases change what they
// are about.
func newSpec(kind, object string, op infrav1.Operation, attempt int, jobs *infrav1.JobsSpec, tick string) Spec {
	return Spec{
		Kind:              kind,
		ObjectName:        object,
		Namespace:         testNamespace,
		UID:               "5f0c6e1e-2b7a-4c55-9d3e-0a1b2c3d4e5f",
		ClusterName:       "prod",
		Op:                op,
		Attempt:           attempt,
		Name:              Name(state.KindShort(kind), object, string(op), attempt, Hash6(testInputsHash, string(op), attempt, tick)),
		Image:             testImage,
		RunnerImage:       testRunnerImage,
		Policy:            MergePolicy(jobs, nil, nil),
		Identity:          "aws",
		CredentialsSecret: "captf-creds-aws",
		InputsHash:        testInputsHash,
	}
}

func buildCases() []buildCase {
	tuned := &infrav1.JobsSpec{
		LockTimeoutSeconds: ptr.To[int32](120),
		ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "registry"}},
		Env: []corev1.EnvVar{
			{Name: "TF_LOG", Value: "DEBUG"},
			{Name: "AWS_REGION", Value: "eu-west-1"},
			{Name: "KUBE_CONFIG_PATH", Value: "/x"},
			{Name: "HTTPS_PROXY", Value: "http://proxy:3128"},
			{Name: "ACCOUNT_ID", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cloud-account"}, Key: "id"}}},
		},
		Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
	}

	unguarded := newSpec(state.KindMachine, "prod-md-0-x7k2p", infrav1.OperationApply, 1, tuned, "")
	unguarded.PullPolicy = corev1.PullAlways
	unguarded.Marks = Marks{DriftRemediation: true}

	guarded := newSpec(state.KindCluster, "prod", infrav1.OperationApply, 2, nil, "")
	guarded.Guard = Guard{Deletes: true, InputsHash: testInputsHash}
	guarded.PlanKeySecret = "captf-plankey-c-prod"

	approved := newSpec(state.KindCluster, "prod", infrav1.OperationApply, 3, nil, "")
	approved.Guard = Guard{Deletes: true, InputsHash: testInputsHash, ExpectPlan: "p2:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"}
	approved.PlanKeySecret = "captf-plankey-c-prod"
	approved.RunnerEvents = true

	poolExports := newSpec(state.KindMachinePool, "prod-pool-0", infrav1.OperationApply, 1, nil, "")
	poolExports.Guard = Guard{Deletes: true, InputsHash: "h2:pool-approval", AllowDeletesHash: "h2:pool-approval"}
	poolExports.PlanKeySecret = "captf-plankey-mp-prod-pool-0"
	poolExports.Marks = Marks{Exports: &Exports{Applied: "h2:pool-exports", Approval: "h2:pool-approval"},
		ApprovedPlan: &ApprovedPlan{Name: "tfmp-prod-pool-0-0a1b2c", PlanHash: "p2:pool-plan"}, AfterInterruptedApply: "captf-mp-prod-pool-0-apply-a1-0f0e0d"}

	plan := newSpec(state.KindCluster, "prod", infrav1.OperationPlan, 1, nil, "")
	plan.PlanKeySecret = "captf-plankey-c-prod"

	destroy := newSpec(state.KindMachine, "a-very-long-terraform-machine-name-that-does-not-fit-in-a-job", infrav1.OperationDestroy, 2, nil, "")
	destroy.ForceUnlock = "2f5e6b8a-1c3d-4e5f-8a9b-0c1d2e3f4a5b"
	destroy.Image = "ghcr.io/captf-io/module-images/noop-machine@sha256:" + "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"

	refresh := newSpec(state.KindMachinePool, "prod-pool-0", infrav1.OperationRefresh, 1, nil, "2026-11-29T14:00:00Z")
	refresh.Identity, refresh.IdentityKind, refresh.CredentialsSecret = "local-creds", infrav1.IdentityKindSecret, "local-creds"

	drift := newSpec(state.KindMachine, "prod-md-0-x7k2p", infrav1.OperationDrift, 1, nil, "2026-11-29T14:00:00Z")
	drift.Identity, drift.CredentialsSecret = "", ""
	drift.Marks = Marks{Fallbacks: []string{"registry.example/machine:v1", "registry.example/machine:v0"}}

	restore := newSpec(state.KindCluster, "prod", infrav1.OperationRestore, 1, nil, "restore/captf-state-backup-5d2b9c4e1f0a3b6c-c-7")
	restore.Restore = &Restore{
		Chunks:     []string{"captf-state-backup-5d2b9c4e1f0a3b6c-c-7", "captf-state-backup-5d2b9c4e1f0a3b6c-c-7-part-1"},
		Resources:  12,
		Serial:     7,
		InputsHash: "", // a backup of unknown inputs: the annotation says so, empty
	}

	return []buildCase{
		{name: "apply-unguarded", spec: unguarded},
		{name: "apply-guarded", spec: guarded},
		{name: "apply-approved", spec: approved},
		{name: "apply-pool-exports-approved", spec: poolExports},
		{name: "plan", spec: plan},
		{name: "destroy", spec: destroy},
		{name: "refresh", spec: refresh},
		{name: "drift", spec: drift},
		{name: "restore", spec: restore},
	}
}
