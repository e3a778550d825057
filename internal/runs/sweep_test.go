package runs

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// TestSweepSparesTheJobsOfALiveObject: the orphan sweep runs when a pass
// found its object absent, but that read may be older than the Jobs the
// sweep lists: a pass woken by a Machine created just before its
// TerraformMachine finds no TerraformMachine, and by the time it lists,
// the TerraformMachine and a Job of it exist. Under load this deleted the
// Job of a live object. A Job naming the UID of the object that exists now
// is kept; one naming an earlier object of the same name, or an object
// that is gone, is deleted; a manager sharded by a watch filter sweeps
// only the Jobs of its shard.
func TestSweepSparesTheJobsOfALiveObject(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns := envtest.Namespace(t, env.Client, "sweep-live")
	live := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alive"},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "example.test/cluster:1"}, IdentityRef: &infrav1.IdentityReference{Name: "cloud"}}}
	if err := env.Client.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	job := func(name, object, uid, shard string) *batchv1.Job {
		t.Helper()
		labels := state.OwnerLabels(state.KindCluster, object, "")
		labels[infrav1.ManagedLabel] = "true"
		if shard != "" {
			labels[infrav1.WatchFilterLabel] = shard
		}
		j := suspendedJob(ns, name, labels, map[string]string{infrav1.OwnerUIDAnnotation: uid, infrav1.OwnerAnnotation: object})
		if err := env.Client.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	kept := job("alive-destroy-now", live.Name, string(live.UID), "")
	earlier := job("alive-destroy-before", live.Name, "0b8d5c1e-0000-4000-8000-000000000002", "")
	gone := job("gone-destroy", "gone", "0b8d5c1e-0000-4000-8000-000000000003", "")
	otherShard := job("gone-destroy-b", "gone", "0b8d5c1e-0000-4000-8000-000000000004", "b")

	k := keeper()
	// A manager of shard "a" sweeps none of them: neither is labelled
	// with its shard.
	if err := k.SweepOrphans(ctx, state.KindCluster, client.ObjectKey{Namespace: ns, Name: "gone"}, "a", &infrav1.TerraformCluster{}); err != nil {
		t.Fatal(err)
	}
	if isGone(t, gone) || isGone(t, otherShard) {
		t.Fatalf("the sweep of shard a deleted a Job it does not select: %s gone %t, %s gone %t", gone.Name, isGone(t, gone), otherShard.Name, isGone(t, otherShard))
	}
	// A manager of shard "b" sweeps the Job of its shard only.
	if err := k.SweepOrphans(ctx, state.KindCluster, client.ObjectKey{Namespace: ns, Name: "gone"}, "b", &infrav1.TerraformCluster{}); err != nil {
		t.Fatal(err)
	}
	if !isGone(t, otherShard) || isGone(t, gone) {
		t.Fatalf("the sweep of shard b: %s gone %t (want true), %s gone %t (want false)", otherShard.Name, isGone(t, otherShard), gone.Name, isGone(t, gone))
	}
	// Both sweeps run as after a NotFound: for "alive", one read before it
	// was created. This manager's shard is "" (every object).
	for _, key := range []client.ObjectKey{client.ObjectKeyFromObject(live), {Namespace: ns, Name: "gone"}} {
		if err := k.SweepOrphans(ctx, state.KindCluster, key, "", &infrav1.TerraformCluster{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		job  *batchv1.Job
		want bool
		what string
	}{
		{kept, true, "the Job of the object that exists"},
		{earlier, false, "the Job of an earlier object of the same name"},
		{gone, false, "the Job of an object that is gone"},
	} {
		if exists := !isGone(t, c.job); exists != c.want {
			t.Errorf("%s: kept %t, want %t", c.what, exists, c.want)
		}
	}
}
