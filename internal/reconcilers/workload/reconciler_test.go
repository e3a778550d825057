package workload

import (
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

func TestWatchFilter(t *testing.T) {
	labelled := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{infrav1.WatchFilterLabel: "team-a"}}}
	other := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{infrav1.WatchFilterLabel: "team-b"}}}
	plain := &infrav1.TerraformMachine{}
	testCases := []struct {
		filter string
		want   [3]bool
	}{
		{"", [3]bool{true, true, true}},
		{"team-a", [3]bool{true, false, false}},
	}
	for _, tc := range testCases {
		p := shard{role: roles.Machine{}, value: tc.filter}.own(&fakeEchoes{})
		for i, obj := range []*infrav1.TerraformMachine{labelled, other, plain} {
			if got := p.Create(event.CreateEvent{Object: obj}); got != tc.want[i] {
				t.Errorf("--watch-filter=%q admits object %d: %v, want %v", tc.filter, i, got, tc.want[i])
			}
		}
	}
}

// TestOwnEchoWakesNoPass: the update that only echoes the engine's own
// status write, or moves only the managed fields, wakes no pass; a
// resync and any other update of the object do.
func TestOwnEchoWakesNoPass(t *testing.T) {
	old := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "10"}}
	echo, other := old.DeepCopy(), old.DeepCopy()
	echo.ResourceVersion, other.ResourceVersion = "11", "12"
	echo.Status.PendingRefreshes, other.Labels = 1, map[string]string{"a": "b"}
	ech := &fakeEchoes{echo: "11"}
	p := shard{role: roles.Machine{}}.own(ech)
	if p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: echo}) {
		t.Error("the echo of the engine's own status write woke a pass")
	}
	if !p.Update(event.UpdateEvent{ObjectOld: echo, ObjectNew: other}) {
		t.Error("another update did not wake a pass")
	}
	applied := other.DeepCopy()
	applied.ResourceVersion, applied.ManagedFields = "13", []metav1.ManagedFieldsEntry{{Manager: "capi-machineset", Operation: metav1.ManagedFieldsOperationApply}}
	if p.Update(event.UpdateEvent{ObjectOld: other, ObjectNew: applied}) {
		t.Error("an update of the managed fields alone woke a pass")
	}
	if !p.Update(event.UpdateEvent{ObjectOld: echo, ObjectNew: echo}) {
		t.Error("a resync did not wake a pass: it is the periodic pass")
	}
	if !p.Create(event.CreateEvent{Object: echo}) || !p.Delete(event.DeleteEvent{Object: echo}) {
		t.Error("a create or delete of the object did not wake a pass")
	}
	if ech.forgotten != 1 {
		t.Errorf("the deleted object's expectation was forgotten %d times, want once", ech.forgotten)
	}
	// An update of an object of another shard still ends the expectation.
	ech.seen = 0
	labelled := other.DeepCopy()
	labelled.ResourceVersion, labelled.Labels = "14", map[string]string{infrav1.WatchFilterLabel: "team-b"}
	if (shard{role: roles.Machine{}, value: "team-a"}).own(ech).Update(event.UpdateEvent{ObjectOld: other, ObjectNew: labelled}) || ech.seen != 1 {
		t.Errorf("an update relabelled to another shard: looked at %d times for an echo, want once, and no pass", ech.seen)
	}
	// An object of this shard relabelled to another is forgotten, as a
	// deleted one is (what its live reports covered, its expectations).
	ours := labelled.DeepCopy()
	ours.Labels = map[string]string{infrav1.WatchFilterLabel: "team-a"}
	ech.forgotten = 0
	if (shard{role: roles.Machine{}, value: "team-a"}).own(ech).Update(event.UpdateEvent{ObjectOld: ours, ObjectNew: labelled}) || ech.forgotten != 1 {
		t.Errorf("an object relabelled away from the shard: forgotten %d times, want once, and no pass", ech.forgotten)
	}
}

// fakeEchoes takes the object at resourceVersion echo for the engine's
// echo, and counts what it is asked.
type fakeEchoes struct {
	echo            string
	seen, forgotten int
}

func (f *fakeEchoes) OwnEcho(o client.Object) bool {
	f.seen++
	return f.echo != "" && o.GetResourceVersion() == f.echo
}

func (f *fakeEchoes) Gone(client.Object) { f.forgotten++ }

func TestJobToObject(t *testing.T) {
	owned := true
	job := func(kind string, controller bool, shardValue string) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "captf-m-web-0-destroy-a1-abcdef",
			Labels:      map[string]string{infrav1.OwnerKindLabel: kind},
			Annotations: map[string]string{infrav1.OwnerAnnotation: "web-0", infrav1.OwnerUIDAnnotation: "uid-1"}}}
		if controller {
			j.OwnerReferences = []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: kind, Name: "web-0", UID: "uid-1", Controller: &owned}}
		}
		if shardValue != "" {
			j.Labels[infrav1.WatchFilterLabel] = shardValue
		}
		return j
	}
	testCases := []struct {
		name   string
		filter string
		job    *batchv1.Job
		want   int
	}{
		{"an unowned Job of a machine wakes the machine", "", job("TerraformMachine", false, ""), 1},
		{"an owned Job wakes its owner", "", job("TerraformMachine", true, ""), 1},
		{"another kind's Job", "", job("TerraformCluster", false, ""), 0},
		{"another kind's owned Job", "", job("TerraformCluster", true, ""), 0},
		{"an unowned Job of this shard", "team-a", job("TerraformMachine", false, "team-a"), 1},
		{"an unowned Job of another shard", "team-a", job("TerraformMachine", false, "team-b"), 0},
		{"an unowned Job of no shard", "team-a", job("TerraformMachine", false, ""), 0},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := shard{role: roles.Machine{}, value: tc.filter}.jobToObject(t.Context(), tc.job)
			if len(got) != tc.want || (tc.want == 1 && got[0].Name != "web-0" || tc.want == 1 && got[0].Namespace != "ns") {
				t.Errorf("requests %v, want %d for ns/web-0", got, tc.want)
			}
		})
	}
}

// Under --watch-filter a mapped watch enqueues, of the objects it maps to
// (read from the real API server), this shard's and the gone ones only.
func TestShardKeep(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns := "shard-keep"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]string{"mine": "a", "theirs": "b", "nobodys": ""} {
		tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "local/noop:tofu"}, IdentityRef: &infrav1.IdentityReference{Name: "id"}}}
		if value != "" {
			tc.Labels = map[string]string{infrav1.WatchFilterLabel: value}
		}
		if err := env.Client.Create(ctx, tc); err != nil {
			t.Fatal(err)
		}
	}
	var reqs []reconcile.Request
	for _, name := range []string{"mine", "theirs", "nobodys", "gone"} {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}})
	}
	for value, want := range map[string][]string{"a": {"mine", "gone"}, "": {"mine", "theirs", "nobodys", "gone"}} {
		var got []string
		for _, r := range (shard{reader: env.Client, role: roles.Cluster{}, value: value}).keep(ctx, slices.Clone(reqs)) {
			got = append(got, r.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("--watch-filter=%q keeps %v, want %v", value, got, want)
		}
	}
}

// A pod of a CAPTF Job wakes, through its Job read from the real API
// server, the object the Job runs for, of this controller's kind only; a
// pod whose Job is gone, or that no Job labels, wakes nothing.
func TestPodToObject(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns := "pod-to-object"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "captf-m-web-0-apply-a1-abcdef",
			Labels:      map[string]string{infrav1.OwnerKindLabel: "TerraformMachine", infrav1.ManagedLabel: "true"},
			Annotations: map[string]string{infrav1.OwnerAnnotation: "web-0", infrav1.OwnerUIDAnnotation: "uid-1"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: jobs.SourceContainer, Image: "local/noop:tofu"}}}}},
	}
	if err := env.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pod := func(jobName string) client.Object {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
		if jobName != "" {
			p.Labels = map[string]string{batchv1.JobNameLabel: jobName}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		role roles.Role
		pod  client.Object
		want []string
	}{
		{"the pod of a machine's Job", roles.Machine{}, pod(job.Name), []string{ns + "/web-0"}},
		{"the pod of a machine's Job, for the clusters' controller", roles.Cluster{}, pod(job.Name), nil},
		{"a pod whose Job is gone", roles.Machine{}, pod("captf-m-web-0-apply-a1-gone00"), nil},
		{"a pod of no Job", roles.Machine{}, pod(""), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range (shard{reader: env.Client, role: tc.role}).podToObject(ctx, tc.pod) {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("wakes %v, want %v", got, tc.want)
			}
		})
	}
}

// fakeJobEchoes takes the Job named own for the engine's own, on create
// and update.
type fakeJobEchoes struct {
	own              string
	forgotten, asked int
}

func (f *fakeJobEchoes) OwnJobCreate(j client.Object) bool { f.asked++; return j.GetName() == f.own }
func (f *fakeJobEchoes) OwnJobUpdate(j *batchv1.Job) bool  { f.asked++; return j.Name == f.own }
func (f *fakeJobEchoes) ForgetJobEcho(client.Object)       { f.forgotten++ }

// TestOwnJobsWakeNoPass: a Job's creation or update that echoes the
// engine's own write wakes no pass; another Job's does, and a deletion
// does and forgets the expectation; the predicate is asked only for what
// jobRead lets through.
func TestOwnJobsWakeNoPass(t *testing.T) {
	ech := &fakeJobEchoes{own: "mine"}
	p := ownJobs(ech, state.KindMachine)
	machineJob := map[string]string{infrav1.OwnerKindLabel: state.OwnerLabels(state.KindMachine, "", "")[state.LabelOwnerKind]}
	mine := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "mine", Labels: machineJob}}
	theirs := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Labels: machineJob}}
	// The cluster controller's watch sees the machine's Job too: it must
	// not end what the engine expects of it.
	clusterWatch := ownJobs(ech, state.KindCluster)
	ech.asked = 0
	if !clusterWatch.Create(event.CreateEvent{Object: mine}) || !clusterWatch.Update(event.UpdateEvent{ObjectOld: mine, ObjectNew: mine}) || ech.asked != 0 {
		t.Errorf("another kind's watch asked the engine %d times about a machine's Job, want none (its mapping drops the Job)", ech.asked)
	}
	if p.Create(event.CreateEvent{Object: mine}) {
		t.Error("the creation of the engine's own Job woke a pass")
	}
	if !p.Create(event.CreateEvent{Object: theirs}) {
		t.Error("the creation of a Job the engine did not create did not wake a pass")
	}
	if p.Update(event.UpdateEvent{ObjectOld: mine, ObjectNew: mine}) {
		t.Error("the echo of the engine's marks woke a pass")
	}
	if !p.Update(event.UpdateEvent{ObjectOld: theirs, ObjectNew: theirs}) {
		t.Error("another update of a Job did not wake a pass")
	}
	if !p.Delete(event.DeleteEvent{Object: mine}) || ech.forgotten != 1 {
		t.Errorf("a Job's deletion: woke a pass and forgot %d expectations, want a pass and one", ech.forgotten)
	}
}
