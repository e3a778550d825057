package scale_test

import (
	"context"
	"fmt"
	"runtime"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// phase is one namespace under its own manager, growing machines whose
// states gzip to about the same size.
type phase struct {
	name    string
	padding int
	w       *world
	m       *manager
	tc      *infrav1.TerraformCluster
	// heapIdle is the live heap once the manager idles with no machine.
	heapIdle uint64
	// start, passes0 and failures0 are when the first object was created
	// and the machine controller's counters then.
	start              time.Time
	passes0, failures0 int64
	machines           int
}

// startPhase makes a namespace, starts a manager watching it, measures
// its idle heap and creates the cluster.
func startPhase(ctx context.Context, name string, stateSize int) (p *phase, err error) {
	p = &phase{name: name}
	if p.padding, err = instancesFor(stateSize, machineOutputs(machineName(0), failureDomain)); err != nil {
		return nil, err
	}
	if p.w, err = newWorld(ctx, "scale-"+name); err != nil {
		return nil, err
	}
	if p.m, err = startManager(ctx, p.w.ns, unlimited, 0); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = p.m.stop()
		}
	}()
	if err := p.w.newIdentity(ctx); err != nil {
		return nil, err
	}
	if _, err := waitQuiet(ctx, 0, 0, time.Minute); err != nil {
		return nil, fmt.Errorf("waiting for the idle manager: %w", err)
	}
	p.heapIdle = liveHeap()
	if p.passes0, err = reconciles(machineController); err != nil {
		return nil, err
	}
	if p.failures0, err = reconcileErrors(machineController); err != nil {
		return nil, err
	}
	p.start = time.Now()
	if p.tc, err = p.w.newCluster(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *phase) stop() error {
	if err := p.m.stop(); err != nil {
		return fmt.Errorf("stopping the %s manager: %w", p.name, err)
	}
	return nil
}

// grow creates machines up to n, waits for them to be provisioned and the
// controllers to idle, measures, and runs an idle pass.
func (p *phase) grow(ctx context.Context, n int) (c checkpoint, err error) {
	if err := p.w.newMachines(ctx, p.machines, n, p.padding); err != nil {
		return c, err
	}
	p.machines = n
	if err := waitProvisioned(ctx, p.w, p.tc, n); err != nil {
		return c, err
	}
	if _, err := waitQuiet(ctx, 0, 0, 2*time.Minute); err != nil {
		return c, fmt.Errorf("waiting for the controllers to idle: %w", err)
	}
	c = checkpoint{phase: p.name, machines: n, heapIdle: p.heapIdle, stateBytes: p.w.stateBytes.Load(), elapsed: time.Since(p.start)}
	if err := checkSteady(ctx, p.w, p.tc); err != nil {
		return c, err
	}
	c.decodes = p.m.engine.Decodes()
	if c.passes, err = reconciles(machineController); err != nil {
		return c, err
	}
	if c.failures, err = reconcileErrors(machineController); err != nil {
		return c, err
	}
	c.passes, c.failures = c.passes-p.passes0, c.failures-p.failures0
	c.heapSteady = liveHeap()
	c.pass, err = p.idlePass(ctx)
	return c, err
}

// idlePass touches the TerraformCluster, which enqueues every machine of
// its cluster although nothing they read changed, and waits for them.
func (p *phase) idlePass(ctx context.Context) (idlePass, error) {
	var r idlePass
	from, err := reconciles(machineController)
	if err != nil {
		return r, err
	}
	perGather, err := gatherAlloc()
	if err != nil {
		return r, err
	}
	decodes, reads, alloc, start := p.m.engine.Decodes(), gathers.Load(), totalAlloc(), time.Now()
	patch := client.MergeFrom(p.tc.DeepCopy())
	metav1.SetMetaDataAnnotation(&p.tc.ObjectMeta, "scale.captf.io/pass", start.Format(time.RFC3339Nano))
	if err := env.Client.Patch(ctx, p.tc, patch); err != nil {
		return r, fmt.Errorf("touching the TerraformCluster: %w", err)
	}
	if r.passes, err = waitQuiet(ctx, from, int64(p.machines), 5*time.Minute); err != nil {
		return r, fmt.Errorf("waiting for the idle pass (%d of %d machines): %w", r.passes, p.machines, err)
	}
	r.time, r.decodes = time.Since(start), p.m.engine.Decodes()-decodes
	r.alloc = float64(totalAlloc()-alloc) - perGather*float64(gathers.Load()-reads)
	return r, nil
}

// liveHeap collects garbage (twice, so that sync.Pools are emptied too)
// and returns the bytes of live heap objects.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// waitProvisioned waits for the TerraformCluster and n machines of w to be
// provisioned.
func waitProvisioned(ctx context.Context, w *world, tc *infrav1.TerraformCluster, n int) error {
	timeout := 2*time.Minute + time.Duration(n)*300*time.Millisecond
	var done int
	var stuck *infrav1.TerraformMachine
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tc), tc); err != nil {
			return false, err
		}
		var list infrav1.TerraformMachineList
		if err := env.Client.List(ctx, &list, client.InNamespace(w.ns)); err != nil {
			return false, err
		}
		done, stuck = 0, nil
		for i := range list.Items {
			if p := list.Items[i].Status.Initialization.Provisioned; p != nil && *p {
				done++
			} else if stuck == nil {
				stuck = &list.Items[i]
			}
		}
		p := tc.Status.Initialization.Provisioned
		return p != nil && *p && done == n, nil
	})
	if err != nil {
		msg := fmt.Sprintf("%d of %d machines provisioned", done, n)
		if stuck != nil {
			msg += fmt.Sprintf("; %s has %s", stuck.Name, conditionSummary(stuck.Status.Conditions))
		}
		return fmt.Errorf("waiting for provisioning (%s; cluster %s): %w", msg, conditionSummary(tc.Status.Conditions), err)
	}
	return nil
}

// checkSteady checks that the world is what the benchmark means to
// measure: no Job ever started, and the cluster's state carries its
// current inputs (else the manager would have started an apply).
func checkSteady(ctx context.Context, w *world, tc *infrav1.TerraformCluster) error {
	var jobs batchv1.JobList
	if err := env.Client.List(ctx, &jobs, client.InNamespace(w.ns)); err != nil {
		return err
	}
	if len(jobs.Items) > 0 {
		return fmt.Errorf("the manager started %d Jobs (%s first); the steady state must need none", len(jobs.Items), jobs.Items[0].Name)
	}
	if c := meta.FindStatusCondition(tc.Status.Conditions, infrav1.InputsAppliedCondition); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("the TerraformCluster's inputs are not applied (%s): the state's inputs hash differs from the manager's",
			conditionSummary(tc.Status.Conditions))
	}
	return nil
}

func conditionSummary(conds []metav1.Condition) string {
	out := ""
	for _, c := range conds {
		if c.Status != metav1.ConditionTrue {
			out += fmt.Sprintf("[%s=%s %s] ", c.Type, c.Status, c.Reason)
		}
	}
	if out == "" {
		return "all conditions True"
	}
	return out
}
