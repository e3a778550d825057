package scale_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/test/envtest"
)

// TestResyncOfASettledFleetSkipsItsPassesAndSeesARotatedCredential: a
// manager restarted over provisioned, settled objects passes each once;
// its resyncs then cost no pass (each object's last pass read the same
// things at the same versions), and a rotated credential, which no
// controller watches, still reaches the runner's mirror at the next
// resync (--sync-period's promise).
func TestResyncOfASettledFleetSkipsItsPassesAndSeesARotatedCredential(t *testing.T) {
	const machines = 3
	objects := int64(machines + 1) // and their TerraformCluster
	ctx := t.Context()
	w, m := provisionedWorld(t, "memo", machines, 2*time.Second)
	t.Cleanup(func() {
		if err := m.stop(); err != nil {
			t.Error(err)
		}
	})

	// A manager restarted over the fleet passes every object once (a
	// replay of its checkpoint, or a full pass), then its first resync
	// costs no pass.
	passes0, err := workloadPasses()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.stop(); err != nil {
		t.Fatal(err)
	}
	if m, err = startManager(ctx, w.ns, unlimited, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if passes0, err = caughtUp(ctx, passes0+objects); err != nil {
		t.Fatal(err)
	}
	skips0, traffic0 := m.engine.Skips(), m.traffic.read()
	if err := waitSkips(ctx, m, objects); err != nil {
		t.Fatal(err)
	}
	passes, err := workloadPasses()
	if err != nil {
		t.Fatal(err)
	}
	skips, traffic := m.engine.Skips()-skips0, m.traffic.read().since(traffic0)
	if ran := passes - passes0 - skips; ran != 0 {
		t.Errorf("a resync of %d settled objects ran %d passes of %d (%d skipped); requests: %s",
			objects, ran, passes-passes0, skips, traffic.top(8))
	}

	// Rotate the credential: the next resync reads it, the mirror follows.
	src := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: "cloud"}, src); err != nil {
		t.Fatal(err)
	}
	src.Data["TOKEN"] = []byte("rotated")
	if err := env.Client.Update(ctx, src); err != nil {
		t.Fatal(err)
	}
	mirror := &corev1.Secret{}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: credentials.MirrorName(w.identity)}, mirror)
		return err == nil && bytes.Equal(mirror.Data["TOKEN"], []byte("rotated")), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("the rotated credential never reached the mirror: %v", err)
	}
}

// waitSkips waits until the engine has skipped n more passes.
func waitSkips(ctx context.Context, m *manager, n int64) error {
	from := m.engine.Skips()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return m.engine.Skips()-from >= n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d skipped passes (%d so far): %w", n, m.engine.Skips()-from, err)
	}
	return nil
}

// waitSettled waits until the manager's engine holds the record of a
// settled pass for n objects.
func waitSettled(ctx context.Context, m *manager, n int) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute+time.Duration(n)*10*time.Millisecond, true, func(context.Context) (bool, error) {
		return m.engine.Settled() >= n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d objects to settle (%d so far): %w", n, m.engine.Settled(), err)
	}
	return nil
}

// caughtUp waits until the workload controllers have finished at least
// passes passes in all and have nothing queued or running, and returns
// how many they finished.
func caughtUp(ctx context.Context, passes int64) (int64, error) {
	var done int64
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		r, err := readMetrics()
		if err != nil {
			return false, err
		}
		done = r.reconciles(clusterController) + r.reconciles(machineController)
		return done >= passes && !r.busy(), nil
	})
	if err != nil {
		return 0, fmt.Errorf("waiting for the restarted manager to catch up (%d of %d passes): %w", done, passes, err)
	}
	return done, nil
}

// workloadPasses counts the passes the TerraformCluster and
// TerraformMachine controllers have finished.
func workloadPasses() (int64, error) {
	r, err := readMetrics()
	return r.reconciles(clusterController) + r.reconciles(machineController), err
}

// provisionedWorld makes a world of one cluster and machines machines,
// and a manager watching only its namespace (no client-side limit, the
// sync period syncPeriod) that has provisioned them; the caller stops the
// manager.
func provisionedWorld(t *testing.T, prefix string, machines int, syncPeriod time.Duration) (*world, *manager) {
	t.Helper()
	envtest.Require(t, env)
	ctx := t.Context()
	if err := bindShippedRole(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := newWorld(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	m, err := startManager(ctx, w.ns, unlimited, syncPeriod)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(err error) {
		t.Helper()
		_ = m.stop()
		t.Fatal(err)
	}
	if err := w.newIdentity(ctx); err != nil {
		fail(err)
	}
	tc, err := w.newCluster(ctx)
	if err != nil {
		fail(err)
	}
	if err := w.newMachines(ctx, 0, machines, 0); err != nil {
		fail(err)
	}
	if err := waitProvisioned(ctx, w, tc, machines); err != nil {
		fail(err)
	}
	return w, m
}
