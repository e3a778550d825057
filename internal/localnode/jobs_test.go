package localnode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/runner"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// startApply creates the Job and per-run Secret of an apply, as the
// manager does: of a TerraformCluster with local credentials (envFrom and
// a volume at /var/run/captf/credentials), or with machine, of a
// TerraformMachine.
func startApply(t *testing.T, ns, image string, machine bool) *batchv1.Job {
	t.Helper()
	meta := metav1.ObjectMeta{Namespace: ns, Name: "demo", Labels: map[string]string{infrav1.ClusterNameLabel: "demo"}}
	var obj client.Object
	kind, role := "TerraformCluster", contract.RoleCluster
	var roleTfvars []byte
	var err error
	if machine {
		kind, role = "TerraformMachine", contract.RoleMachine
		obj = &infrav1.TerraformMachine{ObjectMeta: meta, Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: image}}}
		create(t, obj)
		roleTfvars, err = json.Marshal(map[string]any{
			"captf_contract": contract.Version, "captf_cluster": map[string]any{"name": "demo", "namespace": ns},
			"captf_object":          map[string]any{"kind": "TerraformMachine", "name": "demo", "namespace": ns},
			"captf_tags":            map[string]any{"captf.io/cluster": "demo"},
			"captf_cluster_outputs": map[string]any{}, "machine_name": "demo", "bootstrap_data": "I2Nsb3VkLWNvbmZpZwo=",
			"bootstrap_format": "cloud-config", "failure_domain": nil, "kubernetes_version": "v1.34.1", "control_plane": false,
		})
	} else {
		tc := &infrav1.TerraformCluster{ObjectMeta: meta, Spec: infrav1.TerraformClusterSpec{
			Source:      infrav1.SourceSpec{Image: image},
			IdentityRef: &infrav1.IdentityReference{Kind: infrav1.IdentityKindSecret, Name: "noop-creds"},
		}}
		obj = tc
		create(t, tc)
		create(t, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "noop-creds"},
			Data:       map[string][]byte{"NOOP_TOKEN": []byte("noop-token-value-not-a-secret")},
		})
		roleTfvars, err = inputs.ClusterRole{Common: inputs.NewCommon("TerraformCluster", tc, "demo"),
			Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"}}, Infra: tc}.Tfvars()
	}
	if err != nil {
		t.Fatal(err)
	}
	main, tfvars, err := inputs.Files(role, roleTfvars, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := inputs.Hash(bytes.Repeat([]byte{7}, inputs.MinKeyBytes), role, image, roleTfvars, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := jobs.Spec{
		Kind: kind, ObjectName: "demo", Namespace: ns, UID: obj.GetUID(), ClusterName: "demo",
		Op: infrav1.OperationApply, Attempt: 1, Name: jobs.Name(state.KindShort(kind), "demo", "apply", 1, jobs.Hash6(hash, "apply", 1, "")),
		Image: image, RunnerImage: runnerImage, Policy: jobs.MergePolicy(nil, nil, nil), InputsHash: hash, RunnerEvents: true,
	}
	if !machine {
		spec.Identity, spec.IdentityKind, spec.CredentialsSecret = "noop-creds", infrav1.IdentityKindSecret, "noop-creds"
	}
	job, secret, err := jobs.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	create(t, job)
	if err := jobs.OwnPerRunSecret(secret, job); err != nil {
		t.Fatal(err)
	}
	secret.Data = map[string][]byte{"main.tf.json": main, "terraform.tfvars.json": tfvars}
	create(t, secret)
	return job
}

// runnerNamespace is a namespace where Jobs run as captf-runner with the
// shipped runner role, as the manager sets it up.
func runnerNamespace(t *testing.T) string {
	t.Helper()
	ns := namespace(t, jobs.DefaultServiceAccountName)
	bindRunnerRole(t, ns, jobs.DefaultServiceAccountName)
	return ns
}

func jobPod(t *testing.T, job *batchv1.Job, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
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

// A Job built by jobs.Build runs with the real runner binary: the init
// container copies it from the runner image, the module container runs it
// at the standard paths with the pod's service account token (the shipped
// runner role is enough), the Job completes with the result document as
// the termination message, and the state is in the namespace.
func TestJobRunsTheRealRunner(t *testing.T) {
	n := startNode(t)
	for _, rt := range []string{"tofu", "terraform"} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			ns := runnerNamespace(t)
			job := startApply(t, ns, "local/noop-cluster:"+rt, false)
			pod := jobPod(t, job, "finished", terminated)
			if pod.Status.Phase != corev1.PodSucceeded {
				log, _ := n.Logs(ns, pod.Name, "")
				t.Fatalf("the pod %s; log:\n%s", pod.Status.Phase, log)
			}
			term := pod.Status.ContainerStatuses[0].State.Terminated
			var res runner.Result
			if err := json.Unmarshal([]byte(term.Message), &res); err != nil || res.Op != runner.OpApply || res.Error != nil {
				t.Fatalf("the termination message is not a successful apply: %v %q", err, term.Message)
			}
			if got := strings.Join(res.Runtime.Command, " "); got != jobs.RuntimePath || !res.Image.ProvidersMirror {
				t.Errorf("the runner ran %q (mirror %v), want the standard %s with the mirror", got, res.Image.ProvidersMirror, jobs.RuntimePath)
			}
			suffix, err := state.Suffix(ns, "TerraformCluster", "demo")
			if err != nil {
				t.Fatal(err)
			}
			var secret corev1.Secret
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "tfstate-default-" + suffix}, &secret); err != nil {
				t.Errorf("the state Secret: %v", err)
			}
			if log, err := n.Logs(ns, job.Name, ""); err != nil || !strings.Contains(string(log), "Apply complete") {
				t.Errorf("the Job's log (by Job name) lacks the apply: %v\n%s", err, log)
			}
			if run := runOf(t, n, pod.Name); run.Op != runner.OpApply || run.ExitCode != 0 || run.Job != job.Name || run.Result.Op != runner.OpApply {
				t.Errorf("the node recorded %+v", run)
			}
		})
	}
}

// Deleting a Job whose apply runs delivers SIGTERM to the runner binary:
// the run reports an interruption and releases the state lock, and the
// pod's deletion completes.
func TestDeletingAJobInterruptsTheRunner(t *testing.T) {
	n := startNode(t)
	ns := runnerNamespace(t)
	job := startApply(t, ns, "local/slow:tofu", true)
	suffix, err := state.Suffix(ns, "TerraformMachine", "demo")
	if err != nil {
		t.Fatal(err)
	}
	pod := jobPod(t, job, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	waitLock(t, ns, suffix, true)

	if err := env.Client.Delete(t.Context(), job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pod)
	run := runOf(t, n, pod.Name)
	if !run.Stopped || run.ExitCode != runner.ExitFailure || run.Result.Error == nil || run.Result.Error.Kind != runner.KindInterrupted {
		t.Fatalf("the run was not interrupted: stopped %v, exit %d, error %+v\n%s", run.Stopped, run.ExitCode, run.Result.Error, run.Log)
	}
	waitLock(t, ns, suffix, false)
}

// waitLock waits until the state lock is held, or free.
func waitLock(t *testing.T, ns, suffix string, held bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var lease coordinationv1.Lease
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: state.LockLeaseName(suffix)}, &lease)
		h := lease.Spec.HolderIdentity
		return (err == nil && h != nil && *h != "") == held, nil
	})
	if err != nil {
		t.Fatalf("the state lock never became held=%v", held)
	}
}
