package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/runner"
	"captf.io/captf/pkg/state"
)

// lockInfoAnnotation is where the kubernetes backend records who holds the
// state lock (Who is user@hostname, the hostname being the pod's name).
const lockInfoAnnotation = "app.terraform.io/lock-info"

// A machine whose apply Job is deleted while the apply runs (as a user or
// the loss of a node would): the runtime is stopped, writes what it
// created to the state and releases the state lock; the manager then
// retries, and the machine ends provisioned with the instance the
// interrupted apply created, not a second one.
func interruptedApply(t *testing.T, ctx context.Context, f *flow) {
	const machine = "quickstart-cp-0"
	objs := pick(f.quickstart("tofu"), append(f.base(),
		"Secret/quickstart-cp-0-bootstrap", "Machine/"+machine, "TerraformMachine/"+machine)...)
	for _, o := range objs {
		if o.GetKind() == "TerraformMachine" {
			f.set(o, devenv.ExampleImage("slow", "tofu"), "spec", "source", "image")
		}
	}
	f.create(ctx, objs)

	// The apply is under way once the slow resource is being created: the
	// instance before it is created, and the sleep takes 45 seconds.
	var victim localnode.Run
	f.waitFor(ctx, "the machine's apply Job runs the apply", jobWait, func(context.Context) (bool, string, error) {
		for _, r := range f.runs("TerraformMachine", machine, string(infrav1.OperationApply)) {
			if r.ExitCode != -1 {
				continue
			}
			log, _ := devenv.ReadLog(f.env.StateDir, f.ns, r.Pod, r.Container)
			if strings.Contains(string(log), "time_sleep.boot: Creating...") {
				victim = r
				return true, "", nil
			}
			return false, "pod " + r.Pod + " runs, the apply has not reached the sleep yet", nil
		}
		return false, "no apply pod runs", nil
	})
	t.Logf("deleting Job %s while its pod %s applies", victim.Job, victim.Pod)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: victim.Job}}
	if err := f.env.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	f.waitFor(ctx, "the interrupted pod ended", controllerWait, func(context.Context) (bool, string, error) {
		for _, r := range f.env.Node.Runs() {
			if r.Pod == victim.Pod && r.Container == victim.Container && r.ExitCode != -1 {
				victim = r
				return true, "", nil
			}
		}
		return false, "still running", nil
	})
	if !victim.Stopped || victim.Result.Error == nil || victim.Result.Error.Kind != runner.KindInterrupted || victim.Result.Error.Step != runner.StepApply {
		t.Errorf("the runner did not report an interrupted apply: stopped %v, exit %d, error %+v", victim.Stopped, victim.ExitCode, victim.Result.Error)
	}

	// What the interrupted apply left: the state holds the instance it
	// created, and the lock is no longer its pod's. (A retry may already
	// hold the lock; it cannot have changed the instance.)
	st, raw, err := f.readState(ctx, "TerraformMachine", machine)
	if err != nil {
		t.Fatalf("the interrupted apply left no readable state: %v", err)
	}
	instance := resourceID(raw, "terraform_data", "instance")
	if instance == "" || st.Serial < 1 {
		t.Fatalf("the state (serial %d, %d resources) does not hold the instance the interrupted apply created", st.Serial, st.ManagedResources)
	}
	t.Logf("the interrupted apply wrote state serial %d with %d resources", st.Serial, st.ManagedResources)
	if holder := f.lockHolder(ctx, "TerraformMachine", machine); strings.HasSuffix(holder, "@"+victim.Pod) {
		t.Errorf("the state lock is still held by the interrupted pod (%s)", holder)
	}

	var tm infrav1.TerraformMachine
	f.waitFor(ctx, "the manager retried and the machine is provisioned", jobWait, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, machine, &tm); err != nil {
			return false, "", err
		}
		return provisionedReady(tm.Status.WorkspaceStatus) && tm.Spec.ProviderID != "", fmt.Sprintf("providerID %q, %s", tm.Spec.ProviderID, ready(tm.Status.Conditions)), nil
	})
	if !strings.HasSuffix(tm.Spec.ProviderID, "/"+instance) {
		t.Errorf("providerID %q does not name the instance the interrupted apply created (%s): the retry made another", tm.Spec.ProviderID, instance)
	}
	retried := false
	for _, r := range f.runs("TerraformMachine", machine, string(infrav1.OperationApply)) {
		// The retry may reuse the Job's name: its attempt number counts
		// the Jobs that are left.
		retried = retried || (r.Pod != victim.Pod && r.ExitCode == 0 && r.Started.After(victim.Started))
	}
	if !retried {
		t.Error("no apply Job succeeded after the interrupted one")
	}
	// The interrupted pod released its lock itself: nothing had to be
	// force-unlocked.
	if ev := f.events(ctx, machine, "ForceUnlocked"); len(ev) > 0 {
		t.Errorf("the lock was left behind and force-unlocked: %s", ev[0].Note)
	}

	f.teardown(ctx, objs, "tofu")
}

// resourceID is the id attribute of the first instance of a managed
// resource in a raw state, "" when there is none.
func resourceID(raw []byte, typ, name string) string {
	var s struct {
		Resources []struct {
			Mode, Type, Name string
			Instances        []struct {
				Attributes struct {
					ID string `json:"id"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	for _, r := range s.Resources {
		if r.Mode == "managed" && r.Type == typ && r.Name == name && len(r.Instances) > 0 {
			return r.Instances[0].Attributes.ID
		}
	}
	return ""
}

// lockHolder is the Who of the object's state lock ("" when free).
func (f *flow) lockHolder(ctx context.Context, kind, name string) string {
	f.t.Helper()
	var lease coordinationv1.Lease
	ok, err := f.get(ctx, state.LockLeaseName(f.suffix(kind, name)), &lease)
	if err != nil {
		f.t.Fatal(err)
	}
	if !ok || (ptr.Deref(lease.Spec.HolderIdentity, "") == "" && lease.Annotations[lockInfoAnnotation] == "") {
		return ""
	}
	var info struct{ Who string }
	if err := json.Unmarshal([]byte(lease.Annotations[lockInfoAnnotation]), &info); err != nil || info.Who == "" {
		return "an unknown holder " + ptr.Deref(lease.Spec.HolderIdentity, "")
	}
	return info.Who
}
