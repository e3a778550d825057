package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/localnode"
)

// teardown deletes the Cluster as a user does, waits until Cluster API and
// CAPTF deleted every object (each CAPTF object after a successful destroy
// Job on runtime rt; rt "" when nothing was applied or the local node's
// runs are another process's, and the caller checks), deletes the rest and
// checks that nothing CAPTF made is left in the namespace: no managed
// Secret (state, per-run, records, backups, credentials mirror), Lease,
// Job or pod.
func (f *flow) teardown(ctx context.Context, objs []*unstructured.Unstructured, rt string) {
	f.t.Helper()
	var cluster, owned, workload, rest []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace": // kept
		case "Cluster":
			cluster = append(cluster, o)
		case "Machine", "MachinePool":
			owned = append(owned, o)
		case "TerraformCluster", "TerraformMachine", "TerraformMachinePool":
			workload = append(workload, o)
		default:
			rest = append(rest, o)
		}
	}
	if err := devenv.Delete(ctx, f.env.Client, cluster); err != nil {
		f.t.Fatal(err)
	}
	f.waitFor(ctx, "the Cluster and everything it owns are deleted", jobWait, func(ctx context.Context) (bool, string, error) {
		for _, o := range slices.Concat(cluster, owned, workload) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(o.GroupVersionKind())
			if ok, err := f.get(ctx, o.GetName(), u); ok || err != nil {
				return false, o.GetKind() + "/" + o.GetName() + " is still there", err
			}
		}
		return true, "", nil
	})
	// rt "": nothing was ever applied, or the caller checks the destroys.
	if rt != "" {
		version := f.runtimeVersion(rt)
		for _, o := range workload {
			if !slices.ContainsFunc(f.runs(o.GetKind(), o.GetName(), string(infrav1.OperationDestroy)), func(r localnode.Run) bool {
				return r.ExitCode == 0 && r.Result.Runtime.Version == version
			}) {
				f.t.Errorf("%s/%s is gone without a successful destroy Job on %s %s", o.GetKind(), o.GetName(), rt, version)
			}
		}
	}
	// The identity refuses deletion while its status still lists a
	// namespace its credentials are mirrored into: retry as a user would.
	// The identity controller (one worker for every flow's identity) may
	// take a while to see the mirror go on a loaded run.
	f.waitFor(ctx, "the credentials, the identity and the bootstrap data are deleted", controllerWait, func(ctx context.Context) (bool, string, error) {
		err := devenv.Delete(ctx, f.env.Client, rest)
		if apierrors.IsForbidden(err) {
			return false, err.Error(), nil
		}
		return err == nil, "", err
	})
	f.waitFor(ctx, "nothing is left", controllerWait, f.nothingLeft)
}

// nothingLeft lists what CAPTF made in the namespace and is still there.
func (f *flow) nothingLeft(ctx context.Context) (bool, string, error) {
	var left []string
	lists := []struct {
		kind string
		list client.ObjectList
		opts []client.ListOption
	}{
		{"Secret", &corev1.SecretList{}, []client.ListOption{client.MatchingLabels{infrav1.ManagedLabel: "true"}}},
		{"Lease", &coordinationv1.LeaseList{}, nil},
		{"Job", &batchv1.JobList{}, nil},
		{"Pod", &corev1.PodList{}, nil},
	}
	for _, l := range lists {
		if err := f.env.Client.List(ctx, l.list, append(l.opts, client.InNamespace(f.ns))...); err != nil {
			return false, "", err
		}
		items, err := meta.ExtractList(l.list)
		if err != nil {
			return false, "", err
		}
		for _, it := range items {
			left = append(left, l.kind+"/"+it.(metav1.Object).GetName())
		}
	}
	mirror := &corev1.Secret{}
	if ok, err := f.get(ctx, "captf-creds-"+f.identity(), mirror); ok || err != nil {
		left = append(left, "the credentials mirror Secret/"+mirror.Name)
	}
	return len(left) == 0, "left: " + strings.Join(left, ", "), nil
}

// dump logs what a user would look at when a flow fails: every CAPTF
// object of the namespace with its conditions and last run, the Jobs and
// pods, and where the logs are. Conditions never carry secrets.
func (f *flow) dump(ctx context.Context) {
	var b strings.Builder
	fmt.Fprintf(&b, "namespace %s at failure:\n", f.ns)
	var tcs infrav1.TerraformClusterList
	var tms infrav1.TerraformMachineList
	var tmps infrav1.TerraformMachinePoolList
	_ = f.env.Client.List(ctx, &tcs, client.InNamespace(f.ns))
	_ = f.env.Client.List(ctx, &tms, client.InNamespace(f.ns))
	_ = f.env.Client.List(ctx, &tmps, client.InNamespace(f.ns))
	for _, o := range tcs.Items {
		dumpObject(&b, "TerraformCluster/"+o.Name, o.Spec.Source.Image, o.Status.WorkspaceStatus)
	}
	for _, o := range tms.Items {
		dumpObject(&b, "TerraformMachine/"+o.Name, o.Spec.Source.Image, o.Status.WorkspaceStatus)
	}
	for _, o := range tmps.Items {
		dumpObject(&b, "TerraformMachinePool/"+o.Name, o.Spec.Source.Image, o.Status.WorkspaceStatus)
	}
	var jobList batchv1.JobList
	_ = f.env.Client.List(ctx, &jobList, client.InNamespace(f.ns))
	for _, j := range jobList.Items {
		fmt.Fprintf(&b, "  Job %s: active %d, succeeded %d, failed %d\n", j.Name, j.Status.Active, j.Status.Succeeded, j.Status.Failed)
	}
	for _, r := range f.env.Node.Runs() {
		if r.Namespace == f.ns {
			summary := ""
			if r.Result.Error != nil {
				summary = fmt.Sprintf(", %s in step %s: %s", r.Result.Error.Kind, r.Result.Error.Step, r.Result.Error.Tail)
			}
			fmt.Fprintf(&b, "  run %s (%s, image %s): exit %d, stopped %v%s\n", r.Pod, r.Op, r.Image, r.ExitCode, r.Stopped, summary)
		}
	}
	fmt.Fprintf(&b, "  pod logs: go run ./cmd/captf-dev logs -n %s <pod> reads %s/node/logs/%s/; manager log: %s/manager.log\n",
		f.ns, f.env.StateDir, f.ns, f.env.StateDir)
	f.t.Log(b.String())
}

func dumpObject(b *strings.Builder, name, image string, st infrav1.WorkspaceStatus) {
	fmt.Fprintf(b, "  %s (image %s): provisioned %v\n", name, image, st.Initialization.Provisioned != nil && *st.Initialization.Provisioned)
	for _, c := range st.Conditions {
		fmt.Fprintf(b, "    %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	if st.ActiveJob != nil {
		fmt.Fprintf(b, "    active Job %s (%s)\n", st.ActiveJob.Name, st.ActiveJob.Operation)
	}
	if lr := st.LastRun; lr != nil {
		fmt.Fprintf(b, "    last run %s (%s)", lr.Job, lr.Operation)
		if lr.Error != nil {
			fmt.Fprintf(b, ": %s in step %s: %s", lr.Error.Kind, lr.Error.Step, lr.Error.Summary)
		}
		b.WriteString("\n")
	}
}
