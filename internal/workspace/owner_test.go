package workspace

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// lagging reads through the API server, except one Cluster, which it
// serves as an informer that has not delivered the newest version yet
// would: the copy it was given. Nothing else here can hold an informer
// back on demand.
type lagging struct {
	client.Client
	cluster *clusterv1.Cluster
}

func (l lagging) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if c, ok := obj.(*clusterv1.Cluster); ok && l.cluster != nil && key == client.ObjectKeyFromObject(l.cluster) {
		l.cluster.DeepCopyInto(c)
		return nil
	}
	return l.Client.Get(ctx, key, obj, opts...)
}

// clusterReads counts the live reads of Clusters.
type clusterReads struct {
	client.Reader
	n atomic.Int32
}

func (r *clusterReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*clusterv1.Cluster); ok {
		r.n.Add(1)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestCachedOwnerIsConfirmedBeforeWriting: a pass reads its owner from the
// cache and reads it live only before its first write past the pause
// gate. A cache that has not shown a pause yet must not let that write
// through: the pass is void and runs again with the owner read live, so
// the object reports Paused and nothing is written for it. A pass that
// writes nothing there makes no live read of its owner.
func TestCachedOwnerIsConfirmedBeforeWriting(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	const ns = "owner-cache"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "TerraformCluster", Name: "c"}}}
	if err := env.Client.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c",
		Finalizers:      []string{infrav1.TerraformClusterFinalizer},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c", UID: cluster.UID}}},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "example.test/cluster:1"},
			IdentityRef: &infrav1.IdentityReference{Kind: infrav1.IdentityKindSecret, Name: "cloud"}}}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cloud"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, tc); err != nil {
		t.Fatal(err)
	}
	// Its refresh Job vanished before it was bookkept: the void pass
	// reports it before its gate, and the pass made again live reports it
	// again, as nothing marked it done; its event goes out once.
	tc.Status.ActiveJob = &infrav1.ActiveJob{Name: "captf-c-c-refresh-a1-0abc12", Operation: infrav1.OperationRefresh, Attempt: 1}
	if err := env.Client.Status().Update(ctx, tc); err != nil {
		t.Fatal(err)
	}
	unpaused := cluster.DeepCopy()
	paused := cluster.DeepCopy()
	paused.Spec.Paused = ptr.To(true)
	if err := env.Client.Update(ctx, paused); err != nil {
		t.Fatal(err)
	}
	// The manager's kind of client: cached kinds from a real informer
	// cache, Secrets live.
	informers, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = informers.Start(ctx) }()
	cached, err := client.New(env.Config, client.Options{Scheme: env.Scheme,
		Cache: &client.CacheOptions{Reader: informers, DisableFor: []client.Object{&corev1.Secret{}}}})
	if err != nil {
		t.Fatal(err)
	}
	reads := &clusterReads{Reader: env.Client}
	recorder := events.NewFakeRecorder(100)
	e := &Engine{Client: lagging{Client: cached, cluster: unpaused}, APIReader: reads, Recorder: recorder,
		Options: Options{RunnerImage: "example.test/runner:1"}}
	key := client.ObjectKeyFromObject(tc)
	runnerAccount := func() bool {
		t.Helper()
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobs.DefaultServiceAccountName}, &corev1.ServiceAccount{})
		if err != nil && client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		return err == nil
	}
	pausedCondition := func() *metav1.Condition {
		t.Helper()
		got := &infrav1.TerraformCluster{}
		if err := env.Client.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		return apimeta.FindStatusCondition(got.Status.Conditions, infrav1.PausedCondition)
	}

	// The cache still shows the Cluster unpaused; the API server has it
	// paused.
	if _, err := e.Reconcile(ctx, roles.Cluster{}, key); err != nil {
		t.Fatal(err)
	}
	if runnerAccount() {
		t.Error("a pass wrote the runner's ServiceAccount for a TerraformCluster whose Cluster is paused: the cache's older Cluster was believed at a write")
	}
	if c := pausedCondition(); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Paused = %+v after the pass, want True: the pass over the cache's older Cluster was not made again live", c)
	}
	if n := countEvents(recorder, "JobInterrupted"); n != 1 {
		t.Errorf("the vanished refresh Job was reported by %d JobInterrupted events, want one (the void pass's, not again by the pass made again)", n)
	}

	// The cache still lags: the next pass reads the Cluster live at once,
	// as a pause seen live is looked for live until it is gone (a pass
	// that wrote nothing would otherwise report it gone in between).
	reads.n.Store(0)
	if _, err := e.Reconcile(ctx, roles.Cluster{}, key); err != nil {
		t.Fatal(err)
	}
	if n := reads.n.Load(); n != 1 {
		t.Errorf("the pass after a pause seen live read the Cluster live %d times, want once, first", n)
	}
	if c := pausedCondition(); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Paused = %+v while the Cluster is paused, want True", c)
	}

	// Unpaused, and the cache current: the pass's first write past the
	// gate reads the Cluster live once, and finds the cache's copy (which,
	// unlike a live read, carries its kind) the same.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
		t.Fatal(err)
	}
	cluster.Spec.Paused = nil
	if err := env.Client.Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	e.Client = cached
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &clusterv1.Cluster{}
		err := cached.Get(ctx, client.ObjectKeyFromObject(cluster), got)
		return err == nil && got.ResourceVersion == cluster.ResourceVersion, client.IgnoreNotFound(err)
	}); err != nil {
		t.Fatalf("the cache never showed the unpaused Cluster: %v", err)
	}
	reads.n.Store(0)
	if _, err := e.Reconcile(ctx, roles.Cluster{}, key); err != nil {
		t.Fatal(err)
	}
	if !runnerAccount() {
		t.Fatal("the pass over an unpaused Cluster did not write the runner's ServiceAccount")
	}
	if n := reads.n.Load(); n != 1 {
		t.Errorf("the pass that wrote read the Cluster live %d times, want once (its confirmation)", n)
	}
	if c := pausedCondition(); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Paused = %+v after unpausing, want False", c)
	}

	// Its apply Job runs: the next pass waits for it, writes nothing past
	// the gate, and reads no Cluster live.
	reads.n.Store(0)
	if _, err := e.Reconcile(ctx, roles.Cluster{}, key); err != nil {
		t.Fatal(err)
	}
	got := &infrav1.TerraformCluster{}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ActiveJob == nil {
		t.Fatal("no active Job reported: the pass did not start the apply")
	}
	if n := reads.n.Load(); n != 0 {
		t.Errorf("a pass waiting for its Job read the Cluster live %d times, want none", n)
	}
}

// countEvents drains recorder and counts its events of reason.
func countEvents(recorder *events.FakeRecorder, reason string) int {
	n := 0
	for {
		select {
		case ev := <-recorder.Events:
			if strings.Contains(ev, " "+reason+" ") {
				n++
			}
		default:
			return n
		}
	}
}
