package workload

import (
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
)

// A Job that goes while running wakes, on the real API server, the
// objects waiting at a gate it may have held: the eight slot waiters that
// waited longest, and its own cluster's gate and lease waiters; not
// another cluster's, nor an object that waits for nothing, nor one whose
// wait reason outlived its wait (a Job of it runs).
func TestGateWaitersWakeWhenAJobGoes(t *testing.T) {
	ctx, ns, mgr := testManager(t, "gate-wake")
	if err := indexGates(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	woken := make(recorder, 100)
	s := shard{reader: mgr.GetClient(), role: roles.Machine{}}
	// Only the machine "started" passes For: its request says the
	// controller runs, so its Job watch is in place.
	started := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == "started" })
	if err := ctrl.NewControllerManagedBy(mgr).Named("gate-wake").For(&infrav1.TerraformMachine{}, builder.WithPredicates(started)).
		Watches(&batchv1.Job{}, s.mapped(gateWaiters(s.reader, &infrav1.TerraformMachineList{}, "")), builder.WithPredicates(jobReleased)).
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)}).Complete(woken); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	since := time.Now().Add(-time.Hour)
	machine := func(name, cluster, reason string, running bool) {
		t.Helper()
		tm := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{infrav1.ClusterNameLabel: cluster}},
			Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: "local/noop:tofu"}}}
		if err := env.Client.Create(ctx, tm); err != nil {
			t.Fatal(err)
		}
		if reason == "" {
			return
		}
		tm.Status.Conditions = []metav1.Condition{{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionUnknown, Reason: reason,
			Message: "waits", LastTransitionTime: metav1.NewTime(since)}}
		since = since.Add(time.Second)
		if running {
			tm.Status.ActiveJob = &infrav1.ActiveJob{Name: "captf-m-" + name + "-apply-a1-000000", Operation: infrav1.OperationApply, Attempt: 1}
		}
		if err := env.Client.Status().Update(ctx, tm); err != nil {
			t.Fatal(err)
		}
	}
	machine("started", "c1", "", false)
	select {
	case <-woken:
	case <-time.After(30 * time.Second):
		t.Fatal("the controller never started")
	}
	machine("running", "c1", infrav1.WaitingForJobSlotReason, true) // oldest, but its Job runs
	machine("slot-waiter", "c1", infrav1.WaitingForJobSlotReason, false)
	machine("gate-waiter", "c1", infrav1.WaitingForClusterOperationReason, false)
	machine("lease-waiter", "c1", infrav1.WaitingForRunLeaseReason, false)
	machine("other-cluster", "c2", infrav1.WaitingForClusterOperationReason, false)
	machine("idle", "c1", "", false)
	var slotWaiters []string // after slot-waiter, the seven that waited longest
	for i := range 9 {
		name := fmt.Sprintf("slot-%d", i)
		machine(name, "c9", infrav1.WaitingForJobSlotReason, false)
		if i < 7 {
			slotWaiters = append(slotWaiters, name)
		}
	}

	goes := func(cluster string) []string {
		t.Helper()
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "captf-m-x-apply-",
			Labels: map[string]string{infrav1.ManagedLabel: "true", infrav1.ClusterNameLabel: cluster}},
			Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}}
		if err := env.Client.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		// The index follows the cache: wait until it lists every waiter,
		// and until the Job's informer holds the Job.
		deadline := time.Now().Add(30 * time.Second)
		for {
			var l infrav1.TerraformMachineList
			if err := mgr.GetClient().List(ctx, &l, client.InNamespace(ns), client.MatchingFields{gateIndex: slotGate}); err == nil && len(l.Items) == 10 &&
				mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}) == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the gate index never listed the slot waiters, or the manager's cache never held the Job")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := env.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		var got []string
		timeout := time.After(30 * time.Second)
		for {
			select {
			case req := <-woken:
				if req.Namespace == ns && !slices.Contains(got, req.Name) {
					got = append(got, req.Name)
				}
				continue
			case <-time.After(2 * time.Second): // the batch of one event is in
				if len(got) == 0 {
					continue // none yet: a loaded API server delivers the deletion late
				}
			case <-timeout:
			}
			slices.Sort(got)
			return got
		}
	}
	want := func(names ...string) []string {
		out := append(slices.Clone(slotWaiters), append(names, "slot-waiter")...)
		slices.Sort(out)
		return out
	}
	if got, want := goes("c1"), want("gate-waiter", "lease-waiter"); !slices.Equal(got, want) {
		t.Errorf("a Job of cluster c1 going woke %v, want %v", got, want)
	}
	if got, want := goes("c2"), want("other-cluster"); !slices.Equal(got, want) {
		t.Errorf("a Job of cluster c2 going woke %v, want %v", got, want)
	}
}

// jobReleased passes a Job's update only when it finishes it, and every
// deletion of a CAPTF Job.
func TestJobReleased(t *testing.T) {
	managed := map[string]string{infrav1.ManagedLabel: "true"}
	running := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: managed}}
	finished := running.DeepCopy()
	finished.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	foreign := finished.DeepCopy()
	foreign.Labels = nil
	testCases := []struct {
		name string
		pass bool
		got  bool
	}{
		{"running -> finished", true, jobReleased.Update(event.UpdateEvent{ObjectOld: running, ObjectNew: finished})},
		{"finished -> finished", false, jobReleased.Update(event.UpdateEvent{ObjectOld: finished, ObjectNew: finished})},
		{"running -> running", false, jobReleased.Update(event.UpdateEvent{ObjectOld: running, ObjectNew: running})},
		{"someone else's Job finishing", false, jobReleased.Update(event.UpdateEvent{ObjectOld: running, ObjectNew: foreign})},
		{"deleted while running", true, jobReleased.Delete(event.DeleteEvent{Object: running})},
		{"deleted once finished (pruned)", false, jobReleased.Delete(event.DeleteEvent{Object: finished})},
		{"created", false, jobReleased.Create(event.CreateEvent{Object: finished})},
	}
	for _, tc := range testCases {
		if tc.got != tc.pass {
			t.Errorf("%s: passes %v, want %v", tc.name, tc.got, tc.pass)
		}
	}
}
