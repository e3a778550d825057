package runnerrbac_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/runnerrbac"
	"captf.io/captf/internal/test/envtest"
)

// TestPeriodicSweepReadsTheCache: the periodic sweep takes its inventory
// of CAPTF objects and Jobs from the manager's cache (a live list of
// every TerraformMachine, decoded at each period, was most of an idle
// fleet's CPU), and what it prunes it reads live: a populated namespace
// keeps its accounts in use and loses the stale one, as with live reads.
func TestPeriodicSweepReadsTheCache(t *testing.T) {
	envtest.Require(t, env)
	const ns = "cached"
	fixture(t, ns, cluster("a", func(tc *infrav1.TerraformCluster) { tc.Spec.Jobs = jobsAs("own") }),
		sa("own", true), sa("stale", true), binding(ns, runnerrbac.ClusterRole, "own", "stale"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject: map[client.Object]cache.ByObject{&batchv1.Job{}: {Label: labels.SelectorFromSet(managed)}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	// The live reader refuses to list CAPTF objects and Jobs: a sweep that
	// took them from it would fail, and prune nothing.
	sweeper := &runnerrbac.Sweeper{Client: env.Client, Reader: noInventory{env.Client}, Cache: c, Namespace: ns, Period: time.Hour}
	go func() { _ = sweeper.Start(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		names, _ := subjects(t, ns)
		if slices.Equal(names, []string{"own"}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("bound %v after the periodic sweep from the cache, want [own]", names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noInventory reads live, but refuses the lists the periodic inventory
// takes from the cache.
type noInventory struct{ client.Reader }

func (r noInventory) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	switch list.(type) {
	case *infrav1.TerraformClusterList, *infrav1.TerraformMachineList, *infrav1.TerraformMachinePoolList, *batchv1.JobList:
		return fmt.Errorf("%T listed live: the inventory reads the cache", list)
	}
	return r.Reader.List(ctx, list, opts...)
}
