package scale_test

import (
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	captfmetrics "captf.io/captf/internal/metrics"
	"captf.io/captf/pkg/state"
)

// TestARestartedManagerReplaysItsCheckpoint: a manager keeps what its
// settled passes read in a checkpoint; the next manager (a restart, or a
// new leader) loads it and replays each settled object against its caches
// instead of passing over it in full, publishing the objects' metric
// series as they were. An object one of whose reads changed while no
// manager ran passes in full, and only it.
func TestARestartedManagerReplaysItsCheckpoint(t *testing.T) {
	const machines = 4
	objects := int64(machines + 1) // and their TerraformCluster
	ctx := t.Context()
	w, m := provisionedWorld(t, "checkpoint", machines, 2*time.Second)
	t.Cleanup(func() {
		if err := m.stop(); err != nil {
			t.Error(err)
		}
	})
	// Settled: a resync skips every object, so each has its record.
	if err := waitSkips(ctx, m, objects); err != nil {
		t.Fatal(err)
	}
	series := func() map[captfmetrics.Object]map[string]float64 {
		out := map[captfmetrics.Object]map[string]float64{}
		for o, v := range captfmetrics.Series() {
			if o.Namespace == w.ns {
				out[o] = v
			}
		}
		return out
	}
	published := series()
	if len(published) != int(objects) {
		t.Fatalf("the manager published series for %d objects, want %d", len(published), objects)
	}
	if err := m.stop(); err != nil {
		t.Fatal(err)
	}
	// A new process never had the old one's series.
	if err := forgetSeries(ctx, w.ns); err != nil {
		t.Fatal(err)
	}
	// While no manager runs, something one machine's pass read changes
	// (a label on its state Secret: a new resourceVersion, nothing else).
	touched := machineName(1)
	var states corev1.SecretList
	if err := env.Client.List(ctx, &states, client.InNamespace(w.ns),
		client.MatchingLabels{state.LabelState: "true", state.LabelOwnerKind: state.KindMachine, state.LabelOwnerName: touched}); err != nil {
		t.Fatal(err)
	}
	if len(states.Items) != 1 {
		t.Fatalf("machine %s has %d state Secrets, want 1", touched, len(states.Items))
	}
	st := &states.Items[0]
	st.Labels["touched"] = "while-down"
	if err := env.Client.Update(ctx, st); err != nil {
		t.Fatal(err)
	}

	passes0, err := workloadPasses()
	if err != nil {
		t.Fatal(err)
	}
	if m, err = startManager(ctx, w.ns, shippedLimits, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	passes, err := caughtUp(ctx, passes0+objects)
	if err != nil {
		t.Fatal(err)
	}
	skips := m.engine.Skips()
	if ran := passes - passes0 - skips; ran != 1 || skips != objects-1 {
		t.Errorf("the restarted manager ran %d passes in full and skipped %d, want 1 (machine %s, whose state Secret changed) and %d; requests: %s",
			ran, skips, touched, objects-1, m.traffic.read().top(8))
	}
	after := series()
	for o, want := range published {
		if !maps.Equal(after[o], want) {
			t.Errorf("%s %s: series after the restart %v, want %v as published before it", o.Kind, o.Name, after[o], want)
		}
	}
	if len(after[captfmetrics.Object{Kind: state.KindMachine, Namespace: w.ns, Name: touched}]) == 0 {
		t.Errorf("machine %s passed in full but publishes no series", touched)
	}
}

// TestAManagerRestartedAsSoonAsItsObjectsSettleReplaysThem: the last pass
// of a provisioning writes (the status, the events), and the echo of its
// own write wakes no pass; the object still settles, with a record, soon
// after, not at the next resync. A manager restarted then, long before
// any resync, replays every object of its checkpoint whose reads still
// hold instead of passing over it in full (a cold start bound by the
// client's rate limits); past a set-up restart, that is every object.
func TestAManagerRestartedAsSoonAsItsObjectsSettleReplaysThem(t *testing.T) {
	const machines = 3
	objects := int64(machines + 1) // and their TerraformCluster
	ctx := t.Context()
	w, m := provisionedWorld(t, "settle", machines, time.Hour)
	t.Cleanup(func() {
		if err := m.stop(); err != nil {
			t.Error(err)
		}
	})
	if err := waitSettled(ctx, m, int(objects)); err != nil {
		t.Fatalf("an hour before the first resync: %v", err)
	}
	// Each object's first passes add it to the owners of the credentials
	// mirror and to the subjects of the runner RoleBinding, which the
	// others' passes read; an object that settled before a neighbour's
	// write has a record that no longer holds, and a restart passes it in
	// full, as it must (no watch brings it a pass before the resync). A
	// set-up restart lets such an object settle again, so that the restart
	// measured finds every record current; it replays the others.
	restart := func() (skips, passes int64) {
		t.Helper()
		if err := m.stop(); err != nil {
			t.Fatal(err)
		}
		passes0, err := workloadPasses()
		if err != nil {
			t.Fatal(err)
		}
		if m, err = startManager(ctx, w.ns, shippedLimits, time.Hour); err != nil {
			t.Fatal(err)
		}
		passes, err = caughtUp(ctx, passes0+objects)
		if err != nil {
			t.Fatal(err)
		}
		return m.engine.Skips(), passes - passes0
	}
	restart()
	if err := waitSettled(ctx, m, int(objects)); err != nil {
		t.Fatalf("after the set-up restart: %v", err)
	}
	if skips, passes := restart(); skips != passes || skips != objects {
		t.Errorf("the restarted manager skipped %d of %d passes, want every one of the %d objects' first; requests: %s",
			skips, passes, objects, m.traffic.read().top(8))
	}
}
