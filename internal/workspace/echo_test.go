package workspace

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

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
	e.ExpectWrites(got)
	edited := got.DeepCopy()
	edited.Status.PendingRefreshes = 7
	if err := env.Client.Status().Patch(ctx, edited, client.MergeFrom(got)); err != nil {
		t.Fatal(err)
	}
	if e.OwnEcho(next()) {
		t.Error("a status written by another hand was taken for the pass's echo")
	}
}
