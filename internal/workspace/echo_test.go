package workspace

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestOwnEcho: the engine takes an update for the echo of its own status
// write only when it shows the object exactly as the pass meant to leave
// it.
func TestOwnEcho(t *testing.T) {
	intended := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "10", Generation: 1}}
	// The pass sets conditions at a time with nanoseconds; the API serves
	// seconds.
	at := time.Date(2026, 12, 3, 10, 0, 0, 123456789, time.UTC)
	intended.Status.Conditions = []metav1.Condition{{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.NewTime(at)}}
	served := func(mutate func(*infrav1.TerraformMachine)) *infrav1.TerraformMachine {
		w := intended.DeepCopy()
		w.ResourceVersion = "11"
		w.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at.Truncate(time.Second))
		w.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "captf", Operation: metav1.ManagedFieldsOperationUpdate}}
		if mutate != nil {
			mutate(w)
		}
		return w
	}
	testCases := []struct {
		name   string
		mutate func(*infrav1.TerraformMachine)
		echo   bool
	}{
		{"the write as meant", nil, true},
		{"a spec write of the same pass moved the generation", func(w *infrav1.TerraformMachine) { w.Generation = 2 }, false},
		{"a label came in between", func(w *infrav1.TerraformMachine) { w.Labels = map[string]string{"a": "b"} }, false},
		{"a status field written by another hand", func(w *infrav1.TerraformMachine) { w.Status.PendingRefreshes = 3 }, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			e := &Engine{}
			if e.OwnEcho(served(nil)) {
				t.Fatal("an update was taken for an echo before any write")
			}
			e.expectStatusWrite(intended)
			if got := e.OwnEcho(served(tc.mutate)); got != tc.echo {
				t.Fatalf("OwnEcho = %v, want %v", got, tc.echo)
			}
			if e.OwnEcho(served(nil)) {
				t.Error("a second update was taken for the echo: the expectation ends with the first")
			}
			e.expectStatusWrite(intended)
			e.ForgetEcho(intended)
			if e.OwnEcho(served(nil)) {
				t.Error("a forgotten write was still taken for an echo")
			}
		})
	}
}

// TestOwnEchoOnTheRealAPIServer: the update an informer delivers for a
// pass's status write is taken for its echo; a status written by another
// hand afterwards is not.
func TestOwnEchoOnTheRealAPIServer(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns := "own-echo"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := c.GetInformer(ctx, &infrav1.TerraformCluster{})
	if err != nil {
		t.Fatal(err)
	}
	updates := make(chan client.Object, 10)
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, o any) { updates <- o.(client.Object) }}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache never synced")
	}
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}, Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "example.test/cluster:1"}, IdentityRef: &infrav1.IdentityReference{Name: "cloud"}}}
	if err := env.Client.Create(ctx, tc); err != nil {
		t.Fatal(err)
	}
	next := func() client.Object {
		t.Helper()
		select {
		case o := <-updates:
			return o
		case <-time.After(30 * time.Second):
			t.Fatal("no update came")
			return nil
		}
	}
	// A pass over the object read live, as the engine reads it.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tc), tc); err != nil {
		t.Fatal(err)
	}
	e := &Engine{Client: env.Client}
	role := roles.Cluster{}
	p := &pass{e: e, role: role, obj: tc, w: role.View(tc), before: tc.DeepCopy(), read: tc.ResourceVersion}
	p.set(cond(infrav1.DependenciesReadyCondition, metav1.ConditionTrue, "Written"))
	if err := p.patchStatus(ctx, true); err != nil {
		t.Fatal(err)
	}
	if echo := next(); !e.OwnEcho(echo) {
		t.Error("the update of the pass's own status write was not taken for its echo")
	}
	// A pass that wrote the object itself first (its finalizer) expects
	// nothing: a relist may fold that write into the echo.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tc), tc); err != nil {
		t.Fatal(err)
	}
	p = &pass{e: e, role: role, obj: tc, w: role.View(tc), before: tc.DeepCopy(), read: "an older resourceVersion"}
	p.set(cond(infrav1.DependenciesReadyCondition, metav1.ConditionTrue, "WrittenAfterItsOwnWrite"))
	if err := p.patchStatus(ctx, true); err != nil {
		t.Fatal(err)
	}
	if e.OwnEcho(next()) {
		t.Error("the status write of a pass that had written its object itself was taken for an echo")
	}
	// A pass that writes a contract field of its spec writes twice: each
	// update is its echo, and the status vouches for the generation its
	// own spec write made (no pass is needed to make it follow).
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tc), tc); err != nil {
		t.Fatal(err)
	}
	p = &pass{e: e, role: role, obj: tc, w: role.View(tc), before: tc.DeepCopy(), read: tc.ResourceVersion}
	tc.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.1", Port: 6443}
	p.specChanged = true
	p.set(cond(infrav1.DependenciesReadyCondition, metav1.ConditionTrue, "WrittenWithItsSpec"))
	if err := p.patchStatus(ctx, true); err != nil {
		t.Fatal(err)
	}
	if !e.OwnEcho(next()) {
		t.Error("the update of the pass's spec write was not taken for its echo")
	}
	if !e.OwnEcho(next()) {
		t.Error("the update of the pass's status write, after its spec write, was not taken for its echo")
	}
	written := &infrav1.TerraformCluster{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tc), written); err != nil {
		t.Fatal(err)
	}
	if written.Status.ObservedGeneration != written.Generation || written.Generation != tc.Generation+1 {
		t.Errorf("after the pass's own spec write (generation %d to %d), status.observedGeneration is %d: the pass vouches for the spec it wrote",
			tc.Generation, written.Generation, written.Status.ObservedGeneration)
	}

	// Another hand writes the status back to what the pass had written
	// over: a pass must look.
	got := &infrav1.TerraformCluster{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tc), got); err != nil {
		t.Fatal(err)
	}
	e.expectStatusWrite(got)
	edited := got.DeepCopy()
	edited.Status.PendingRefreshes = 7
	if err := env.Client.Status().Patch(ctx, edited, client.MergeFrom(got)); err != nil {
		t.Fatal(err)
	}
	if e.OwnEcho(next()) {
		t.Error("a status written by another hand was taken for the pass's echo")
	}
}

// TestOwnJobEcho: the engine takes a Job's creation for its own only when
// it created that Job, once; and a Job's update for the echo of its
// bookkeeping marks only when the update shows what a pass reads of the
// Job exactly as the marks leave it (pod counters and versions aside).
func TestOwnJobEcho(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "captf-m-m-apply-a1-abcdef", UID: "j1", ResourceVersion: "5",
		Annotations: map[string]string{infrav1.OperationLabel: "apply"}}}
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	e := &Engine{}
	if e.OwnJobCreate(job) {
		t.Error("a Job the engine did not create was taken for its own")
	}
	e.expectJobCreate(job)
	if !e.OwnJobCreate(job) {
		t.Error("the creation of a Job the engine created was not taken for its own")
	}
	if e.OwnJobCreate(job) {
		t.Error("a second creation event was taken for the engine's own")
	}

	marked := withAnnotations(job, map[string]string{infrav1.BookkeptAnnotation: "true"})
	served := func(mutate func(*batchv1.Job)) *batchv1.Job {
		j := marked.DeepCopy()
		j.ResourceVersion = "9"
		j.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "captf"}}
		j.Status.Succeeded, j.Status.Ready = 1, ptr.To[int32](0)
		if mutate != nil {
			mutate(j)
		}
		return j
	}
	testCases := []struct {
		name   string
		mutate func(*batchv1.Job)
		echo   bool
	}{
		{"the marks as written", nil, true},
		{"another annotation came in between", func(j *batchv1.Job) { j.Annotations["other"] = "x" }, false},
		{"the Job is being deleted", func(j *batchv1.Job) { j.DeletionTimestamp = &metav1.Time{} }, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			e := &Engine{}
			e.expectJobUpdate(marked)
			if e.OwnJobCreate(job) {
				t.Error("an expected update was taken for a creation")
			}
			if got := e.OwnJobUpdate(served(tc.mutate)); got != tc.echo {
				t.Fatalf("OwnJobUpdate = %v, want %v", got, tc.echo)
			}
			if e.OwnJobUpdate(served(nil)) {
				t.Error("a second update was taken for the echo: the expectation ends with the first")
			}
		})
	}
	e.expectJobUpdate(marked)
	e.ForgetJobEcho(job)
	if e.OwnJobUpdate(served(nil)) {
		t.Error("a forgotten mark was still taken for an echo")
	}
}
