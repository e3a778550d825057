package workload

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/workspace"
)

// recorder is a reconciler that hands every request to the test.
type recorder chan reconcile.Request

func (r recorder) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r <- req
	return reconcile.Result{}, nil
}

// testManager makes the namespace ns and a manager on the test API server
// (not started), with a context that ends with the test.
func testManager(t *testing.T, ns string) (context.Context, string, ctrl.Manager) {
	t.Helper()
	envtest.Require(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, ns, mgr
}

// A labelled variablesFrom source wakes, on the real API server, the
// objects of its namespace that name it, as soon as it changes or loses
// its label; a source nobody names, or an unlabelled one, wakes nobody.
func TestVariablesSourceWakesItsUsers(t *testing.T) {
	ctx, ns, mgr := testManager(t, "vars-wake")
	sources, err := sourcesCache(mgr, "")
	if err != nil {
		t.Fatal(err)
	}
	woken := make(recorder, 100)
	b := ctrl.NewControllerManagedBy(mgr).Named("vars-wake").For(&infrav1.TerraformCluster{}).
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)})
	if err := withSources(b, sourceWatches(sources, shard{reader: mgr.GetClient(), role: roles.Cluster{}}, &infrav1.TerraformClusterList{}, &workspace.Engine{})).Complete(woken); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	labelled := map[string]string{infrav1.VariablesLabel: "true"}
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings", Labels: labelled}, Data: map[string]string{"k": "1"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unlabelled"}, Data: map[string]string{"k": "1"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secret-settings", Labels: labelled}, Data: map[string][]byte{"k": []byte("1")}},
		&infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "user"}, Spec: infrav1.TerraformClusterSpec{
			Source: infrav1.SourceSpec{Image: "local/noop:tofu"}, IdentityRef: &infrav1.IdentityReference{Name: "id"},
			VariablesFrom: []infrav1.VariablesFromSource{
				{ConfigMapRef: &infrav1.LocalObjectReference{Name: "settings"}},
				{ConfigMapRef: &infrav1.LocalObjectReference{Name: "unlabelled"}, Optional: ptr.To(true)},
				{SecretRef: &infrav1.LocalObjectReference{Name: "secret-settings"}},
			}}},
		&infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bystander"}, Spec: infrav1.TerraformClusterSpec{
			Source: infrav1.SourceSpec{Image: "local/noop:tofu"}, IdentityRef: &infrav1.IdentityReference{Name: "id"}}},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// The creations wake both clusters; from then on only the sources do.
	// The next request for this test's namespace (the package's other
	// tests' clusters are listed by the controller too).
	next := func(what string) reconcile.Request {
		t.Helper()
		for {
			select {
			case req := <-woken:
				if req.Namespace == ns {
					return req
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("nothing woken after %s", what)
				return reconcile.Request{}
			}
		}
	}
	seen := map[string]bool{}
	for !seen["user"] || !seen["bystander"] {
		seen[next("the creations").Name] = true
	}
	drain := func() {
		for {
			select {
			case <-woken:
			default:
				return
			}
		}
	}
	change := func(o client.Object, mutate func()) {
		t.Helper()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		mutate()
		if err := env.Client.Update(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	testCases := []struct {
		name   string
		obj    client.Object
		mutate func(client.Object)
	}{
		{"a labelled ConfigMap's new value", objs[0], func(o client.Object) { o.(*corev1.ConfigMap).Data["k"] = "2" }},
		{"a labelled Secret losing its label", objs[2], func(o client.Object) { o.SetLabels(nil) }},
		{"a Secret labelled again", objs[2], func(o client.Object) { o.SetLabels(labelled) }},
	}
	for _, tc := range testCases {
		drain()
		// An unlabelled source's change comes first and wakes nobody: the
		// next request is the labelled source's user.
		change(objs[1], func() { objs[1].(*corev1.ConfigMap).Data["k"] += "x" })
		change(tc.obj, func() { tc.mutate(tc.obj) })
		if req := next(tc.name); req.Name != "user" {
			t.Errorf("%s woke %s, want only the object naming it", tc.name, req.Name)
		}
	}
}
