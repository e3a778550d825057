package runnerrbac_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/runnerrbac"
	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

var managed = map[string]string{infrav1.ManagedLabel: "true"}

// fixture creates a namespace and objs in it.
func fixture(t *testing.T, ns string, objs ...client.Object) {
	t.Helper()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	for _, o := range objs {
		o.SetNamespace(ns)
		create(t, o)
	}
}

func create(t *testing.T, o client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), o); err != nil {
		t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
	}
}

func sa(name string, runner bool) *corev1.ServiceAccount {
	s := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if runner {
		s.Labels = map[string]string{infrav1.RunnerLabel: "true"}
	}
	return s
}

func binding(ns string, ref string, names ...string) *rbacv1.RoleBinding {
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: runnerrbac.ClusterRole, Labels: managed},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ref}}
	for _, n := range names {
		rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: n, Namespace: ns})
	}
	return rb
}

// subjects lists the ServiceAccounts the RoleBinding of ns binds, sorted.
func subjects(t *testing.T, ns string) (names []string, ref string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: runnerrbac.ClusterRole}, rb); err != nil {
		t.Fatal(err)
	}
	for _, s := range rb.Subjects {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names, rb.RoleRef.Name
}

func jobsAs(name string) *infrav1.JobsSpec { return &infrav1.JobsSpec{ServiceAccountName: name} }

func cluster(name string, change func(*infrav1.TerraformCluster)) *infrav1.TerraformCluster {
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{infrav1.ClusterNameLabel: name}},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "local/noop:tofu"}, IdentityRef: &infrav1.IdentityReference{Name: "id"}}}
	if change != nil {
		change(tc)
	}
	return tc
}

func machine(name, clusterName string, jobs *infrav1.JobsSpec) *infrav1.TerraformMachine {
	return &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{infrav1.ClusterNameLabel: clusterName}},
		Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: "local/noop:tofu"}, Jobs: jobs}}
}

// Ensure binds the ServiceAccount a pass runs as, repairs a RoleBinding
// whose roleRef was changed (keeping its subjects), unbinds an account
// whose opt-in label was removed, and never touches a RoleBinding CAPTF
// does not manage.
func TestEnsure(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	ns := "ensure"
	changed := binding(ns, "edit", "someone")
	changed.Subjects = append(changed.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"},
		rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "elsewhere", Name: "intruder"})
	fixture(t, ns, sa("custom", true), changed)

	cond, err := runnerrbac.Ensure(ctx, env.Client, ns, "captf-runner")
	if err != nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("Ensure(captf-runner) = %+v, %v", cond, err)
	}
	if names, ref := subjects(t, ns); ref != runnerrbac.ClusterRole || !slices.Equal(names, []string{"captf-runner", "someone"}) {
		t.Fatalf("after a changed roleRef: bound %v to %s, want [captf-runner someone] to %s", names, ref, runnerrbac.ClusterRole)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "captf-runner"}, &corev1.ServiceAccount{}); err != nil {
		t.Fatalf("the default ServiceAccount was not created: %v", err)
	}
	if cond, err := runnerrbac.Ensure(ctx, env.Client, ns, "custom"); err != nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("Ensure(custom) = %+v, %v", cond, err)
	}
	custom := &corev1.ServiceAccount{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "custom"}, custom); err != nil {
		t.Fatal(err)
	}
	custom.Labels = nil
	if err := env.Client.Update(ctx, custom); err != nil {
		t.Fatal(err)
	}
	cond, err = runnerrbac.Ensure(ctx, env.Client, ns, "custom")
	if err != nil || cond.Reason != infrav1.ServiceAccountNotOptedInReason {
		t.Fatalf("Ensure(custom) after its label went = %+v, %v; want ServiceAccountNotOptedIn", cond, err)
	}
	if names, _ := subjects(t, ns); slices.Contains(names, "custom") {
		t.Errorf("the account without its opt-in label is still bound: %v", names)
	}

	foreign := "foreign"
	rb := binding(foreign, "edit", "someone")
	rb.Labels = nil
	fixture(t, foreign, rb)
	cond, err = runnerrbac.Ensure(ctx, env.Client, foreign, "captf-runner")
	if err != nil || cond.Reason != infrav1.RBACFailedReason {
		t.Fatalf("Ensure over an unmanaged RoleBinding = %+v, %v; want RBACFailed", cond, err)
	}
	if names, ref := subjects(t, foreign); ref != "edit" || !slices.Equal(names, []string{"someone"}) {
		t.Errorf("the unmanaged RoleBinding was changed: %v to %s", names, ref)
	}
}

// TestCheckWritesNothing: Check only reads. In a namespace without the
// runner's ServiceAccount and RoleBinding it says the runner is ready
// once written and a write is due, and writes neither; its Write makes
// them, after which nothing is due. A custom account that lost its label
// is not ready, yet its unbinding is due.
func TestCheckWritesNothing(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	ns := "check"
	fixture(t, ns, sa("custom", false))
	b, err := runnerrbac.Check(ctx, env.Client, ns, "captf-runner")
	if err != nil || !b.Ready() || !b.Due() {
		t.Fatalf("Check in an empty namespace = ready %t, due %t, %v; want ready once written, a write due", b.Ready(), b.Due(), err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "captf-runner"}, &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Check wrote the ServiceAccount (get: %v)", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: runnerrbac.ClusterRole}, &rbacv1.RoleBinding{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Check wrote the RoleBinding (get: %v)", err)
	}
	if cond, err := b.Write(ctx, env.Client); err != nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("Write = %+v, %v", cond, err)
	}
	if names, ref := subjects(t, ns); ref != runnerrbac.ClusterRole || !slices.Equal(names, []string{"captf-runner"}) {
		t.Fatalf("after the write: bound %v to %s", names, ref)
	}
	if b, err := runnerrbac.Check(ctx, env.Client, ns, "captf-runner"); err != nil || !b.Ready() || b.Due() {
		t.Errorf("Check after the write = ready %t, due %t, %v; want ready, nothing due", b.Ready(), b.Due(), err)
	}
	b, err = runnerrbac.Check(ctx, env.Client, ns, "custom")
	if err != nil || b.Ready() || !b.Due() || b.Condition().Reason != infrav1.ServiceAccountNotOptedInReason {
		t.Errorf("Check of an account without its label = ready %t, due %t, %+v, %v; want not opted in, its unbinding due", b.Ready(), b.Due(), b.Condition(), err)
	}
}

// The sweep of a namespace without CAPTF objects removes CAPTF's
// ServiceAccounts, RoleBindings and Leases and nothing else; in a
// populated one it prunes the RoleBinding to the accounts in use, keeping
// every cluster's default when a machine's cluster cannot be found. The
// Sweeper sweeps at its start.
func TestSweep(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	lease := func(name string, labels map[string]string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	mine := sa("captf-runner", false)
	mine.Labels = managed
	fixture(t, "empty", mine, sa("theirs", false), binding("empty", runnerrbac.ClusterRole, "captf-runner"),
		lease("run", managed), lease("theirs", nil))

	fixture(t, "populated",
		cluster("a", func(tc *infrav1.TerraformCluster) {
			tc.Spec.Jobs = jobsAs("own")
			tc.Spec.Defaults = &infrav1.ClusterDefaults{Jobs: jobsAs("defaulted")}
		}),
		machine("a-0", "a", nil), machine("a-1", "a", jobsAs("unlabelled")),
		sa("own", true), sa("defaulted", true), sa("stale", true), sa("unlabelled", false),
		binding("populated", runnerrbac.ClusterRole, "own", "defaulted", "captf-runner", "stale", "unlabelled"), lease("run", managed))

	// A Job still runs as the account the cluster used before its spec
	// moved to another one: both stay bound until it ends.
	running := func(account string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "captf-c-moved-apply-a1-abcdef", Labels: managed},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: account,
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "runner", Image: "local/runner"}}}}}}
	}
	fixture(t, "moved", cluster("moved", func(tc *infrav1.TerraformCluster) { tc.Spec.Jobs = jobsAs("after") }),
		sa("before", true), sa("after", true), binding("moved", runnerrbac.ClusterRole, "before", "after"), running("before"))
	// A namespace whose last object is gone while its destroy Job still
	// runs keeps its RBAC until the Job ends.
	fixture(t, "draining", binding("draining", runnerrbac.ClusterRole, "captf-runner"), running("captf-runner"))

	fixture(t, "unresolved",
		cluster("b", func(tc *infrav1.TerraformCluster) {
			tc.Spec.Defaults = &infrav1.ClusterDefaults{Jobs: jobsAs("b-default")}
		}),
		machine("m", "ghost", nil), sa("b-default", true), sa("stale", true),
		binding("unresolved", runnerrbac.ClusterRole, "b-default", "captf-runner", "stale"))

	for ns, want := range map[string][]string{"populated": {"defaulted", "own"}, "unresolved": {"b-default", "captf-runner"},
		"moved": {"after", "before"}, "draining": {"captf-runner"}} {
		if err := runnerrbac.Sweep(ctx, env.Client, env.Client, ns); err != nil {
			t.Fatal(err)
		}
		if names, _ := subjects(t, ns); !slices.Equal(names, want) {
			t.Errorf("%s: bound %v after the sweep, want %v", ns, names, want)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "populated", Name: "run"}, &coordinationv1.Lease{}); err != nil {
		t.Errorf("the sweep deleted a Lease of a populated namespace: %v", err)
	}

	sweeper := &runnerrbac.Sweeper{Client: env.Client, Reader: env.Client, Namespace: "empty", Period: time.Hour}
	if !sweeper.NeedLeaderElection() {
		t.Error("the sweep runs on every replica, want the leader only")
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = sweeper.Start(sctx) }()
	gone := []client.Object{mine, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "empty", Name: runnerrbac.ClusterRole}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "empty", Name: "run"}}}
	deadline := time.Now().Add(30 * time.Second)
	for _, o := range gone {
		for {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%T %s of the empty namespace still there after the sweep at start (%v)", o, o.GetName(), err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, o := range []client.Object{&corev1.ServiceAccount{}, &coordinationv1.Lease{}} {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "empty", Name: "theirs"}, o); err != nil {
			t.Errorf("the sweep deleted %T theirs, which CAPTF does not manage: %v", o, err)
		}
	}
}
