package kubelet_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// jobTimeout bounds a whole run: init, apply and the Job controller's
// bookkeeping.
const jobTimeout = 3 * time.Minute

// namespace creates a fresh namespace.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kubelet-"}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// create creates obj or fails the test.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// run is one operation of one object, as the manager would start it.
type run struct {
	spec   jobs.Spec
	main   []byte
	tfvars []byte
}

// clusterRun is an apply of a TerraformCluster with inputs rendered for
// the cluster role, credentials from the local Secret of credentials
// (delivered as envFrom and as a volume), and runner events on.
func clusterRun(t *testing.T, ns, image string) run {
	t.Helper()
	tc := &infrav1.TerraformCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo", Labels: map[string]string{infrav1.ClusterNameLabel: "demo"}},
		Spec: infrav1.TerraformClusterSpec{
			Source:      infrav1.SourceSpec{Image: image},
			IdentityRef: &infrav1.IdentityReference{Kind: infrav1.IdentityKindSecret, Name: "noop-creds"},
		},
	}
	create(t, tc)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"},
		Spec: clusterv1.ClusterSpec{ClusterNetwork: clusterv1.ClusterNetwork{
			Pods: clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16"}}, APIServerPort: 6443,
		}},
	}
	roleTfvars, err := inputs.ClusterRole{Common: inputs.NewCommon("TerraformCluster", tc, "demo"), Cluster: cluster, Infra: tc}.Tfvars()
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(t, "TerraformCluster", tc, contract.RoleCluster, image, roleTfvars)
	r.spec.Identity, r.spec.IdentityKind, r.spec.CredentialsSecret = "noop-creds", infrav1.IdentityKindSecret, "noop-creds"
	r.spec.RunnerEvents = true
	return r
}

// credentials creates the local credentials Secret clusterRun uses.
func credentials(t *testing.T, ns string) {
	t.Helper()
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "noop-creds"},
		Data:       map[string][]byte{"NOOP_TOKEN": []byte("noop-token-value-not-a-secret")},
	})
}

// machineRun is an apply of a TerraformMachine with machine-role inputs.
func machineRun(t *testing.T, ns, image string) run {
	t.Helper()
	tm := &infrav1.TerraformMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-cp-0", Labels: map[string]string{infrav1.ClusterNameLabel: "demo"}},
		Spec:       infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: image}},
	}
	create(t, tm)
	tfvars := map[string]any{
		"captf_contract":        contract.Version,
		"captf_cluster":         map[string]any{"name": "demo", "namespace": ns},
		"captf_object":          map[string]any{"kind": "TerraformMachine", "name": tm.Name, "namespace": ns},
		"captf_tags":            map[string]any{"captf.io/cluster": "demo", "captf.io/name": tm.Name},
		"captf_cluster_outputs": map[string]any{"cluster_id": "fond-lark", "network_id": "123", "region": "noop-local"},
		"machine_name":          tm.Name,
		"bootstrap_data":        base64.StdEncoding.EncodeToString([]byte("#cloud-config\n")),
		"bootstrap_format":      "cloud-config",
		"failure_domain":        nil,
		"kubernetes_version":    "v1.34.1",
		"control_plane":         true,
	}
	data, err := json.Marshal(tfvars)
	if err != nil {
		t.Fatal(err)
	}
	return newRun(t, "TerraformMachine", tm, contract.RoleMachine, image, data)
}

func newRun(t *testing.T, kind string, obj client.Object, role contract.Role, image string, roleTfvars []byte) run {
	t.Helper()
	main, tfvars, err := inputs.Files(role, roleTfvars, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := inputs.Hash(bytes.Repeat([]byte{7}, inputs.MinKeyBytes), role, image, roleTfvars, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	op := infrav1.OperationApply
	return run{main: main, tfvars: tfvars, spec: jobs.Spec{
		Kind: kind, ObjectName: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(), ClusterName: "demo",
		Op: op, Attempt: 1,
		Name:  jobs.Name(state.KindShort(kind), obj.GetName(), string(op), 1, jobs.Hash6(hash, string(op), 1, "")),
		Image: image, RunnerImage: "local/captf-runner:test",
		Policy:     jobs.MergePolicy(nil, nil, nil),
		InputsHash: hash,
	}}
}

// start creates the run's Job, then its per-run Secret, as the manager
// does (the pod may start before the Secret exists).
func start(t *testing.T, r run) *batchv1.Job {
	t.Helper()
	job, secret, err := jobs.Build(r.spec)
	if err != nil {
		t.Fatal(err)
	}
	create(t, job)
	if err := jobs.OwnPerRunSecret(secret, job); err != nil {
		t.Fatal(err)
	}
	secret.Data = map[string][]byte{"main.tf.json": r.main, "terraform.tfvars.json": r.tfvars}
	create(t, secret)
	return job
}

// waitJobFinished waits for the Job's Complete or Failed condition and
// returns its type.
func waitJobFinished(t *testing.T, job *batchv1.Job) batchv1.JobConditionType {
	t.Helper()
	var done batchv1.JobConditionType
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		var got batchv1.Job
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), &got); err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				done = c.Type
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the Job %s did not finish: %v", job.Name, err)
	}
	return done
}

// waitPod waits until the Job's pod satisfies cond and returns it.
func waitPod(t *testing.T, job *batchv1.Job, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := env.Client.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
			return false, err
		}
		for i := range list.Items {
			if cond(&list.Items[i]) {
				pod = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no pod of Job %s %s: %v", job.Name, what, err)
	}
	return pod
}

// waitGone waits until the object is deleted.
func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("%T %s was not deleted: %v", obj, obj.GetName(), err)
	}
}

// sourceStatus is the status of the module container.
func sourceStatus(pod *corev1.Pod) corev1.ContainerStatus {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == jobs.SourceContainer {
			return s
		}
	}
	return corev1.ContainerStatus{}
}
