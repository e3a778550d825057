package workload

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/test/envtest"
)

// The watches of the objects a pass reads besides its own wake it for a
// change of what it reads, and only for that: a Cluster API object's
// status churn, or a TerraformCluster's own bookkeeping, wakes none of
// the objects that watch them.
func TestWatchesWakeOnWhatPassesRead(t *testing.T) {
	now := metav1.NewTime(time.Now())
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: now}
	cluster := func(edit func(*clusterv1.Cluster)) client.Object {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: "1", Labels: map[string]string{"a": "b"}}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	machine := func(edit func(*clusterv1.Machine)) client.Object {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", ResourceVersion: "1"}, Spec: clusterv1.MachineSpec{ClusterName: "c"}}
		if edit != nil {
			edit(m)
		}
		return m
	}
	pool := func(edit func(*clusterv1.MachinePool)) client.Object {
		mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: "1"}, Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To[int32](1)}}
		if edit != nil {
			edit(mp)
		}
		return mp
	}
	tc := func(edit func(*infrav1.TerraformCluster)) client.Object {
		c := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: "1"}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	job := func(edit func(*batchv1.Job)) client.Object {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "captf-m-m-apply-a1-abcdef", ResourceVersion: "1"}}
		if edit != nil {
			edit(j)
		}
		return j
	}
	pod := func(reason string) client.Object {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "captf-m-m-apply-a1-abcdef-x1", ResourceVersion: "1"}}
		switch reason {
		case "":
		case "Running":
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: jobs.SourceContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		case "runner ErrImagePull":
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: jobs.RunnerContainer, Image: "local/runner-gone:1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: jobs.SourceContainer,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
		default:
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: jobs.SourceContainer, Image: "local/gone:1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "pulling " + reason}}}}
		}
		return p
	}
	for _, tt := range []struct {
		name       string
		watch      predicate.Predicate
		old, new   client.Object
		wantsAPass bool
	}{
		{"a Job's pod whose module image cannot be pulled", podPull, pod("ContainerCreating"), pod("ErrImagePull"), true},
		{"a Job's pod the kubelet backs off pulling", podPull, pod("ErrImagePull"), pod("ImagePullBackOff"), false},
		{"a Job's pod pulling again", podPull, pod("ImagePullBackOff"), pod("ErrImagePull"), false},
		{"a Job's pod whose image came", podPull, pod("ImagePullBackOff"), pod("Running"), true},
		{"a Job's pod whose runner image cannot be pulled", podPull, pod(""), pod("runner ErrImagePull"), true},
		{"a Job's pod whose runner image came", podPull, pod("runner ErrImagePull"), pod("Running"), true},
		{"a Job's pod started", podPull, pod(""), pod("Running"), false},
		{"a Job's pod scheduled", podPull, pod(""), pod("ContainerCreating"), false},
		{"a Cluster's resync", clusterRead, cluster(nil), cluster(nil), false},
		{"a Cluster's conditions", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Status.Conditions, c.Status.Phase = "2", []metav1.Condition{cond}, "Provisioned"
		}), false},
		{"a Cluster's control plane initialized", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Status.Initialization.ControlPlaneInitialized = "2", ptr.To(true)
		}), true},
		{"a Cluster's infrastructure provisioned, copied by Cluster API from the TerraformCluster", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Status.Initialization.InfrastructureProvisioned = "2", ptr.To(true)
		}), false},
		{"a Cluster paused", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) { c.ResourceVersion, c.Spec.Paused = "2", ptr.To(true) }), true},
		{"a Cluster's annotation", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Annotations = "2", map[string]string{clusterv1.PausedAnnotation: ""}
		}), true},
		{"a Cluster deleted", clusterRead, cluster(nil), cluster(func(c *clusterv1.Cluster) { c.ResourceVersion, c.DeletionTimestamp = "2", &now }), true},
		{"a Cluster's conditions, for its members", memberReadOfCluster, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Status.Conditions, c.Status.Initialization.ControlPlaneInitialized = "2", []metav1.Condition{cond}, ptr.To(true)
		}), false},
		{"a Cluster paused, for its members", memberReadOfCluster, cluster(nil), cluster(func(c *clusterv1.Cluster) { c.ResourceVersion, c.Spec.Paused = "2", ptr.To(true) }), true},
		{"a Cluster unpaused, for its members", memberReadOfCluster, cluster(func(c *clusterv1.Cluster) { c.Spec.Paused = ptr.To(true) }),
			cluster(func(c *clusterv1.Cluster) { c.ResourceVersion, c.Spec.Paused = "2", ptr.To(false) }), true},
		{"a Cluster pointed at another TerraformCluster, for its members", memberReadOfCluster, cluster(nil), cluster(func(c *clusterv1.Cluster) {
			c.ResourceVersion, c.Spec.InfrastructureRef = "2", clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "TerraformCluster", Name: "other"}
		}), true},
		{"a Machine's status", machineRead, machine(nil), machine(func(m *clusterv1.Machine) {
			m.ResourceVersion, m.Status.Conditions, m.Status.Phase = "2", []metav1.Condition{cond}, "Running"
		}), false},
		{"a Machine's bootstrap data", machineRead, machine(nil), machine(func(m *clusterv1.Machine) {
			m.ResourceVersion, m.Spec.Bootstrap.DataSecretName = "2", ptr.To("boot")
		}), true},
		{"a Machine's provider ID, copied by Cluster API from the TerraformMachine", machineRead, machine(nil), machine(func(m *clusterv1.Machine) {
			m.ResourceVersion, m.Generation, m.Spec.ProviderID = "2", 2, "noop://m"
		}), false},
		{"a Machine's version", machineRead, machine(nil), machine(func(m *clusterv1.Machine) { m.ResourceVersion, m.Spec.Version = "2", "v1.31.0" }), true},
		{"a Machine's remediation annotation", machineRead, machine(nil), machine(func(m *clusterv1.Machine) {
			m.ResourceVersion, m.Annotations = "2", map[string]string{infrav1.RemediateMachineAnnotation: ""}
		}), true},
		{"a MachinePool's status", machinePoolRead, pool(nil), pool(func(mp *clusterv1.MachinePool) {
			mp.ResourceVersion, mp.Status.Conditions = "2", []metav1.Condition{cond}
		}), false},
		{"a MachinePool's provider IDs, copied by Cluster API from the TerraformMachinePool", machinePoolRead, pool(nil), pool(func(mp *clusterv1.MachinePool) {
			mp.ResourceVersion, mp.Spec.ProviderIDList = "2", []string{"noop://a"}
		}), false},
		{"a MachinePool scaled", machinePoolRead, pool(nil), pool(func(mp *clusterv1.MachinePool) { mp.ResourceVersion, mp.Spec.Replicas = "2", ptr.To[int32](2) }), true},
		{"a TerraformCluster's Job and conditions", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) {
			c.ResourceVersion, c.Status.Conditions = "2", []metav1.Condition{cond}
			c.Status.ActiveJob = &infrav1.ActiveJob{Name: "j"}
			c.Status.LastRun = &infrav1.LastRun{}
			c.Status.StateBytes, c.Status.ObservedGeneration = 10, 3
		}), false},
		{"a TerraformCluster provisioned", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) {
			c.ResourceVersion, c.Status.Initialization.Provisioned = "2", ptr.To(true)
		}), true},
		{"a TerraformCluster's new state", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) {
			c.ResourceVersion, c.Status.ObservedStateSerial = "2", 4
		}), true},
		{"a TerraformCluster's defaults", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) {
			c.ResourceVersion, c.Generation, c.Spec.MaxActiveJobs = "2", 2, ptr.To[int32](3)
		}), true},
		{"a TerraformCluster deleted", readByMembers, tc(nil), tc(func(c *infrav1.TerraformCluster) { c.ResourceVersion, c.DeletionTimestamp = "2", &now }), true},
		{"a Job's pod created and ready", jobRead, job(nil), job(func(j *batchv1.Job) {
			j.ResourceVersion, j.Status.Active, j.Status.Ready, j.Status.StartTime = "2", 1, ptr.To[int32](1), &now
		}), false},
		{"a Job's pod ending", jobRead, job(nil), job(func(j *batchv1.Job) {
			j.ResourceVersion, j.Status.Active, j.Status.Terminating = "2", 0, ptr.To[int32](1)
			j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"p"}}
		}), false},
		{"a Job complete", jobRead, job(nil), job(func(j *batchv1.Job) {
			j.ResourceVersion, j.Status.Succeeded, j.Status.CompletionTime = "2", 1, &now
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		}), true},
		{"a Job's success criteria met", jobRead, job(nil), job(func(j *batchv1.Job) {
			j.ResourceVersion, j.Status.Conditions = "2", []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}}
		}), false},
		{"a Job failed", jobRead, job(func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}}
		}), job(func(j *batchv1.Job) {
			j.ResourceVersion, j.Status.Failed = "2", 1
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}, {Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded}}
		}), true},
		{"a Job bookkept", jobRead, job(nil), job(func(j *batchv1.Job) {
			j.ResourceVersion, j.Annotations = "2", map[string]string{infrav1.BookkeptAnnotation: "true"}
		}), true},
		{"a Job deleted in the foreground", jobRead, job(nil), job(func(j *batchv1.Job) {
			j.ResourceVersion, j.DeletionTimestamp, j.Finalizers = "2", &now, []string{metav1.FinalizerDeleteDependents}
		}), true},
		{"a Job's deadline shortened", jobRead, job(nil), job(func(j *batchv1.Job) { j.ResourceVersion, j.Spec.ActiveDeadlineSeconds = "2", ptr.To[int64](1) }), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if strings.HasSuffix(tt.name, "for its members") && tt.watch.Create(event.CreateEvent{Object: tt.new}) {
				t.Error("a Cluster's creation wakes its members: they are woken by their Machine, MachinePool or TerraformCluster")
			}
			if got := tt.watch.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.wantsAPass {
				t.Errorf("the update wakes a pass: %v, want %v", got, tt.wantsAPass)
			}
		})
	}
	// A pod is created with its Job (whose event wakes the object), and
	// goes with it: only a pod seen first while it cannot pull wakes it.
	for _, tt := range []struct {
		pod        client.Object
		wantsAPass bool
	}{{pod(""), false}, {pod("Running"), false}, {pod("ErrImagePull"), true}} {
		if got := podPull.Create(event.CreateEvent{Object: tt.pod}); got != tt.wantsAPass {
			t.Errorf("a pod seen first with %+v wakes a pass: %v, want %v", tt.pod.(*corev1.Pod).Status.ContainerStatuses, got, tt.wantsAPass)
		}
		if podPull.Delete(event.DeleteEvent{Object: tt.pod}) {
			t.Errorf("a pod's deletion wakes a pass; its Job's events do")
		}
	}
}

// A Cluster paused or unpaused wakes, on the real API server's objects,
// the machines and pools of that cluster in its namespace, and no other.
func TestPausedMembers(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	meta := clusterMember
	source := infrav1.SourceSpec{Image: "local/noop:tofu"}
	createAll(t, []string{"pause-a", "pause-b"},
		&infrav1.TerraformMachine{ObjectMeta: meta("pause-a", "a-0", "a"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachine{ObjectMeta: meta("pause-a", "other-0", "other"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachine{ObjectMeta: meta("pause-b", "a-0", "a"), Spec: infrav1.TerraformMachineSpec{Source: source}},
		&infrav1.TerraformMachinePool{ObjectMeta: meta("pause-a", "a-pool", "a"), Spec: infrav1.TerraformMachinePoolSpec{Source: source}},
	)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "pause-a", Name: "a"}}
	for _, tc := range []struct {
		list client.ObjectList
		want []string
	}{
		{&infrav1.TerraformMachineList{}, []string{"pause-a/a-0"}},
		{&infrav1.TerraformMachinePoolList{}, []string{"pause-a/a-pool"}},
	} {
		var got []string
		for _, r := range pausedMembers(env.Client, tc.list)(ctx, cluster) {
			got = append(got, r.String())
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%T: woken %v, want %v", tc.list, got, tc.want)
		}
	}
}
