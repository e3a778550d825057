package scale_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	captfmetrics "captf.io/captf/internal/metrics"
	"captf.io/captf/internal/setup"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// Environment variables of the fleet benchmark (make scale sets
// ScaleEnv; the others override its defaults).
const (
	// ScaleEnv must be set for the benchmarks of make scale to run: each
	// takes minutes, too long for make bench.
	ScaleEnv = "CAPTF_SCALE"
	// FleetMachinesEnv and FleetClustersEnv size the fleet: machines
	// spread evenly over clusters, one cluster per namespace.
	FleetMachinesEnv = "CAPTF_SCALE_FLEET_MACHINES"
	FleetClustersEnv = "CAPTF_SCALE_FLEET_CLUSTERS"
	// RatioMachinesEnv sizes the two fleets of the heap ratio.
	RatioMachinesEnv = "CAPTF_SCALE_RATIO_MACHINES"
	// IdleEnv is how long each fleet idles (a Go duration).
	IdleEnv = "CAPTF_SCALE_IDLE"
	// SyncPeriodEnv replaces the fleet managers' --sync-period (a Go
	// duration; the shipped default when unset), to try the benchmarks
	// in minutes.
	SyncPeriodEnv = "CAPTF_SCALE_SYNC_PERIOD"
	// RatioIdleEnv and RatioSyncPeriodEnv are how long the heap ratio's
	// fleets idle and their managers' --sync-period: the ratio is taken
	// from the live heap at the end of the window (before the first
	// resync, which is measured after it), which neither changes.
	RatioIdleEnv       = "CAPTF_SCALE_RATIO_IDLE"
	RatioSyncPeriodEnv = "CAPTF_SCALE_RATIO_SYNC_PERIOD"
	// FleetProbesEnv is how many new machines BenchmarkIdleFleet times on
	// its fleet once it idled (target 2 with the whole fleet present; none
	// unless set).
	FleetProbesEnv = "CAPTF_SCALE_FLEET_PROBES"
	// QuietFileEnv names a file BenchmarkIdleFleet creates once its cold
	// start is over and its fleet idles, and AloneFileEnv one it waits for
	// before its probes: make scale runs its other benchmarks in that
	// time, in another process (hack/scale.sh).
	QuietFileEnv = "CAPTF_SCALE_QUIET_FILE"
	AloneFileEnv = "CAPTF_SCALE_ALONE_FILE"
)

const (
	defaultFleetMachines = 5000
	defaultFleetClusters = 50
	// defaultRatioMachines, defaultRatioIdle and defaultRatioSync keep
	// make scale bounded: the heap ratio is a property of each machine,
	// taken at the end of the idle window.
	defaultRatioMachines = 400
	defaultRatioIdle     = time.Minute
	defaultRatioSync     = time.Minute
	defaultIdle          = 10 * time.Minute
	// fleetState is the gzipped size of a fleet machine's state, and
	// largeFactor how many times larger the large fleet's are.
	fleetState  = 2 << 10
	largeFactor = 60
)

// The goals of targets 3 and 4 of make scale.
const (
	idleCPUGoal   = 0.02      // of one core, on average over the idle minutes
	idleHeapGoal  = 150 << 20 // live heap at the end of the idle minutes
	heapRatioGoal = 1.05      // large states' idle heap over small ones'
	coldStartGoal = 60 * time.Second
)

func requireScale(b *testing.B) {
	b.Helper()
	if os.Getenv(ScaleEnv) == "" {
		b.Skipf("make scale runs this benchmark (%s=1): it takes minutes", ScaleEnv)
	}
}

// duration reads a positive duration from the environment variable name.
func duration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s=%q: want a positive duration", name, v)
	}
	return d
}

// BenchmarkIdleFleet is targets 3 and 4 of make scale. A fleet of
// provisioned TerraformMachines (5000 across 50 TerraformClusters, each
// in a namespace of its own, unless CAPTF_SCALE_FLEET_MACHINES and
// CAPTF_SCALE_FLEET_CLUSTERS say otherwise) is made of states as a
// successful apply leaves them, adopted, never applied, by one manager
// watching every namespace. Then:
//
//   - target 4: that manager is stopped and a new one, with the shipped
//     client rate limits, started over the same fleet. It is caught up
//     when every object has been reconciled once and the controllers are
//     idle; no Job may start and no status may be written (no object's
//     resourceVersion changes).
//   - target 3: the same manager idles for 10 minutes (CAPTF_SCALE_IDLE),
//     with nothing else running in the process; unless that window held
//     a resync of its own, the manager's first resync, which comes about
//     two sync periods after its start and passes every machine, is then
//     waited for and measured (CPU, requests, passes, decompressions,
//     errors). The steady cost is the idle window's plus one resync every
//     --sync-period (unless the window held one): its share of a core is
//     the target's CPU figure. The live heap at the end, every
//     decompression (there should be none: no state changed) and the
//     requests per second are reported.
//
// Then, with CAPTF_SCALE_FLEET_PROBES set, target 2 on the same fleet:
// new machines timed as BenchmarkReactionTime's, with the whole fleet
// present, once the file CAPTF_SCALE_ALONE_FILE names exists (make scale
// runs its other benchmarks beside the idle fleet, from the file
// CAPTF_SCALE_QUIET_FILE names, created when the fleet starts idling).
//
// The fleet checks that every object reached Provisioned and that no
// manager started a Job (but for the probes'); it is removed at the end.
func BenchmarkIdleFleet(b *testing.B) {
	spec, ctx := fleetSize(b, FleetMachinesEnv, defaultFleetMachines)
	spec.quiet = os.Getenv(QuietFileEnv)
	probes := count(b, FleetProbesEnv, 0)
	objects := spec.machines + spec.clusters
	for range b.N {
		f, cold, r, err := settleFleet(ctx, b, "fleet", spec, fleetState)
		if err != nil {
			b.Fatal(err) // settleFleet removed the fleet
		}
		// Targets 3 and 4 first: the probes that follow may fail.
		b.ReportMetric(r.steadyShare()*100, "steady-cpu-%")
		b.ReportMetric(mib(r.heap), "idle-heap-MiB")
		b.ReportMetric(r.steadyRate(), "steady-requests/s")
		b.ReportMetric(cold.took.Seconds(), "cold-start-s")
		verdict(3, fmt.Sprintf("steady CPU %.2f%% of a core (%s), live heap %.1f MiB, %d decompressions, %d failed passes, %.2f requests/s with %d objects",
			r.steadyShare()*100, r.steadyParts(), mib(r.heap), r.allDecodes(), r.allFailures(), r.steadyRate(), objects),
			fmt.Sprintf("<= %.0f%%, <= %d MiB, 0", idleCPUGoal*100, idleHeapGoal>>20),
			r.steadyShare() <= idleCPUGoal && r.heap <= idleHeapGoal && r.allDecodes() == 0 && r.allFailures() == 0)
		verdict(4, fmt.Sprintf("caught up in %s over %d objects: %d requests, %.1f MiB read, %d status writes, %d failed passes, %d Jobs, %d objects changed",
			cold.took.Round(100*time.Millisecond), objects, cold.traffic.requests, float64(cold.traffic.bytesRead)/(1<<20),
			cold.traffic.statusWrites, cold.failures, cold.jobs, cold.changed),
			fmt.Sprintf("<= %s, 0 status writes, 0 failed passes, 0 Jobs, 0 changed", coldStartGoal),
			cold.took <= coldStartGoal && cold.traffic.statusWrites == 0 && cold.failures == 0 && cold.jobs == 0 && cold.changed == 0)
		var react reaction
		if probes > 0 {
			react, err = f.probeAlone(ctx, b, probes)
		}
		if rerr := f.remove(ctx); rerr != nil && err == nil {
			err = rerr
		}
		if err != nil {
			b.Fatal(err)
		}
		if probes > 0 {
			react.report(b, objects)
		}
	}
}

// probeAlone times probes new machines on the idle fleet (target 2 with
// the whole fleet present) once the file AloneFileEnv names exists: the
// other benchmarks of make scale, run beside the idle fleet, are over.
func (f *fleet) probeAlone(ctx context.Context, b *testing.B, probes int) (reaction, error) {
	if err := awaitFile(ctx, os.Getenv(AloneFileEnv)); err != nil {
		return reaction{}, err
	}
	prof, err := newProfiler("fleet")
	if err != nil {
		return reaction{}, err
	}
	return f.probe(ctx, b, probes, prof)
}

// awaitFile waits until the file name exists ("": at once), for two
// hours at most: another process says so that it is done.
func awaitFile(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	progress("waiting for %s", name)
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 2*time.Hour, true, func(context.Context) (bool, error) {
		_, err := os.Stat(name)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", name, err)
	}
	return nil
}

// BenchmarkIdleFleetLargeStates is the second half of target 3: a fleet
// made, restarted and idled as BenchmarkIdleFleet's (with 1000 machines
// unless CAPTF_SCALE_RATIO_MACHINES says otherwise) is removed,
// and a fleet of states 60 times larger made, restarted and idled the
// same way. Its live heap over the first's is the ratio; neither may
// decompress a state in its resync or while idle.
func BenchmarkIdleFleetLargeStates(b *testing.B) {
	spec, ctx := fleetSize(b, RatioMachinesEnv, defaultRatioMachines)
	spec.idle, spec.sync = duration(b, RatioIdleEnv, defaultRatioIdle), duration(b, RatioSyncPeriodEnv, defaultRatioSync)
	for range b.N {
		small, _, smallIdle, err := settleFleet(ctx, b, "fleet-s", spec, fleetState)
		if err != nil {
			b.Fatal(err)
		}
		if err := small.remove(ctx); err != nil {
			b.Fatal(err)
		}
		large, _, largeIdle, err := settleFleet(ctx, b, "fleet-l", spec, fleetState*largeFactor)
		if err != nil {
			b.Fatal(err)
		}
		if err := large.remove(ctx); err != nil {
			b.Fatal(err)
		}
		ratio := float64(largeIdle.heap) / float64(smallIdle.heap)
		b.ReportMetric(ratio, "heap-large/small")
		verdict(3, fmt.Sprintf("heap ratio: idle live heap with states %dx larger %.1f MiB against %.1f MiB over %d objects: ratio %.3f; %d and %d decompressions",
			largeFactor, mib(largeIdle.heap), mib(smallIdle.heap), spec.machines+spec.clusters, ratio, smallIdle.allDecodes(), largeIdle.allDecodes()),
			fmt.Sprintf("<= %.2f, 0", heapRatioGoal), ratio <= heapRatioGoal && smallIdle.allDecodes() == 0 && largeIdle.allDecodes() == 0)
	}
}

// fleetSize reads the size of a fleet benchmark's fleets (machines from
// machinesEnv, else def); each fleet gets a control plane of its own.
func fleetSize(b *testing.B, machinesEnv string, def int) (fleetSpec, context.Context) {
	requireScale(b)
	envtest.Require(b, env)
	machines := count(b, machinesEnv, def)
	spec := fleetSpec{machines: machines, clusters: min(count(b, FleetClustersEnv, defaultFleetClusters), machines),
		idle: duration(b, IdleEnv, defaultIdle), sync: duration(b, SyncPeriodEnv, setup.Defaults().SyncPeriod)}
	return spec, b.Context()
}

// fleetSpec is the size of a benchmark's fleets and how they idle.
type fleetSpec struct {
	machines, clusters int
	idle, sync         time.Duration
	// quiet, when set, is a file created once the cold start is over and
	// the fleet idles (QuietFileEnv).
	quiet string
}

// progress tells the one running make scale where it stands: a
// benchmark's own log only shows at its end.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s scale: %s\n", time.Now().Format(time.TimeOnly), fmt.Sprintf(format, args...))
}

// verdict prints the line make scale ends with for a target.
func verdict(target int, figure, goal string, met bool) {
	word := "missed"
	if met {
		word = "met"
	}
	fmt.Printf("target %d: %s (goal %s) %s\n", target, figure, goal, word)
}

// fleet is clusters namespaces, each with a provisioned cluster and its
// share of the machines, under one manager watching every namespace.
type fleet struct {
	worlds   []*world
	clusters []*infrav1.TerraformCluster
	machines int
	m        *manager
	// sync is the managers' --sync-period.
	sync time.Duration
	// stopControlPlane stops the fleet's control plane, when it has one of
	// its own (ownControlPlane).
	stopControlPlane func() error
}

// settleFleet provisions a fleet, restarts its manager with the shipped
// rate limits (target 4) and lets it idle (target 3).
// A fleet that fails is removed, so that the next benchmark, whose
// manager watches every namespace, does not find it.
func settleFleet(ctx context.Context, b *testing.B, prefix string, spec fleetSpec, stateSize int) (f *fleet, cold coldStart, r idleRun, err error) {
	stop, err := ownControlPlane(ctx)
	if err != nil {
		return nil, coldStart{}, idleRun{}, err
	}
	b.Cleanup(func() { _ = stop() })
	made := &fleet{machines: spec.machines, sync: spec.sync, stopControlPlane: stop}
	f = made
	defer func() {
		if err != nil {
			if rerr := made.remove(ctx); rerr != nil {
				b.Logf("removing the failed fleet %s: %v", prefix, rerr)
			}
		}
	}()
	if err := f.provision(ctx, b, prefix, spec.clusters, stateSize); err != nil {
		return nil, coldStart{}, idleRun{}, err
	}
	prof, err := newProfiler(prefix)
	if err != nil {
		return nil, coldStart{}, idleRun{}, err
	}
	cold, err = f.restart(ctx, prof, shippedLimits)
	if err != nil {
		return nil, cold, idleRun{}, err
	}
	cold.log(b, prefix)
	if spec.quiet != "" {
		if err := os.WriteFile(spec.quiet, nil, 0o644); err != nil {
			return nil, cold, idleRun{}, err
		}
	}
	r, err = f.idle(ctx, spec.idle, prof)
	if err != nil {
		return nil, cold, r, err
	}
	r.log(b, prefix)
	return f, cold, r, nil
}

// provision makes the fleet, with machine states that gzip to about
// stateSize bytes, starts a manager and waits until every object is
// provisioned and the controllers idle. The manager has no client-side
// rate limits: provisioning is the set-up of targets 3 and 4, not one of
// them, and the restart that follows puts the shipped limits back.
func (f *fleet) provision(ctx context.Context, b *testing.B, prefix string, clusters, stateSize int) error {
	machines := f.machines
	padding, err := instancesFor(stateSize, machineOutputs(machineName(0), failureDomain))
	if err != nil {
		return err
	}
	for range clusters {
		w, err := newWorld(ctx, prefix)
		if err != nil {
			return err
		}
		f.worlds = append(f.worlds, w)
	}
	if f.m, err = startManager(ctx, "", unlimited, f.sync); err != nil {
		return err
	}
	prof, err := newProfiler(prefix)
	if err != nil {
		return err
	}
	stopCPU, err := prof.cpu("provision")
	if err != nil {
		return err
	}
	defer func() { _ = stopCPU() }()
	start := time.Now()
	progress("%s: creating %d clusters and %d machines", prefix, clusters, machines)
	for _, w := range f.worlds {
		if err := w.newIdentity(ctx); err != nil {
			return err
		}
		tc, err := w.newCluster(ctx)
		if err != nil {
			return err
		}
		f.clusters = append(f.clusters, tc)
	}
	// The machines, creators at a time over the whole fleet.
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, creators)
	for c := range creators {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < machines && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				w := f.worlds[i%clusters]
				if err := w.newMachine(ctx, i/clusters, padding); err != nil {
					errs[c] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return err
	}
	created := time.Since(start)
	progress("%s: created in %s; waiting for every object to be provisioned", prefix, created.Round(time.Second))
	if err := f.waitProvisioned(ctx); err != nil {
		return err
	}
	if err := stopCPU(); err != nil {
		return err
	}
	if _, err := waitQuiet(ctx, 0, 0, 5*time.Minute); err != nil {
		return fmt.Errorf("waiting for the controllers to idle: %w", err)
	}
	var stateBytes int64
	for _, w := range f.worlds {
		stateBytes += w.stateBytes.Load()
	}
	traffic := f.m.traffic.read()
	b.Logf("%s: %d machines in %d clusters (gzipped state %.1f KiB each, %.0f MiB in all) created in %s, provisioned and idle after %s; %d requests (%s)",
		prefix, machines, clusters, float64(stateBytes)/float64(machines)/1024, float64(stateBytes)/(1<<20),
		created.Round(time.Second), time.Since(start).Round(time.Second), traffic.requests, traffic.top(8))
	settled, err := f.settle(ctx)
	if err != nil {
		return err
	}
	b.Logf("%s: settled by a manager started over it in %s: %d of %d objects' records held (%d requests)",
		prefix, settled.took.Round(100*time.Millisecond), settled.skips, machines+clusters, settled.traffic.requests)
	return f.checkNoJobs(ctx)
}

// settle brings the provisioned fleet to its steady state, as a resync
// would. Each object's last pass wrote, and looks again seconds later to
// settle; but a record made before a neighbour changed something it read
// (the namespace's credentials mirror, for one, gains an owner reference
// with each new machine) no longer holds, and would cost that object a full pass at
// the next start. So, still part of the set-up, a second manager without
// client limits starts over the fleet: it passes those objects in full
// once, and they settle for good.
func (f *fleet) settle(ctx context.Context) (coldStart, error) {
	objects := f.machines + len(f.clusters)
	if err := waitSettled(ctx, f.m, objects); err != nil {
		return coldStart{}, err
	}
	progress("settling the fleet: a manager without client limits starts over it (set-up)")
	c, err := f.restart(ctx, profiler{}, unlimited)
	if err != nil {
		return c, fmt.Errorf("settling the fleet: %w", err)
	}
	return c, waitSettled(ctx, f.m, objects)
}

// waitProvisioned waits for every cluster and machine of the fleet to be
// provisioned.
func (f *fleet) waitProvisioned(ctx context.Context) error {
	inFleet := map[string]bool{}
	for _, w := range f.worlds {
		inFleet[w.ns] = true
	}
	// Counted in an informer's cache, not by listing the fleet every few
	// seconds: at 5,000 machines those lists were a quarter of the test
	// process's CPU while the fleet was provisioned, and the API server
	// served them.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		return err
	}
	for _, o := range []client.Object{&infrav1.TerraformMachine{}, &infrav1.TerraformCluster{}} {
		if _, err := watched.GetInformer(ctx, o); err != nil {
			return err
		}
	}
	go func() { _ = watched.Start(ctx) }()
	if !watched.WaitForCacheSync(ctx) {
		return fmt.Errorf("the provisioning watch did not sync")
	}
	var machines, clusters int
	var stuck string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute+time.Duration(f.machines)*time.Second/2, true, func(ctx context.Context) (bool, error) {
		// The counts of a complete poll only: the last one may be cut
		// short by the timeout.
		var m, c int
		var st string
		var tms infrav1.TerraformMachineList
		if err := watched.List(ctx, &tms, client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		for i := range tms.Items {
			tm := &tms.Items[i]
			if !inFleet[tm.Namespace] {
				continue
			}
			if p := tm.Status.Initialization.Provisioned; p != nil && *p {
				m++
			} else if st == "" {
				st = fmt.Sprintf("%s/%s has %s", tm.Namespace, tm.Name, conditionSummary(tm.Status.Conditions))
			}
		}
		var tcs infrav1.TerraformClusterList
		if err := watched.List(ctx, &tcs, client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		for i := range tcs.Items {
			tc := &tcs.Items[i]
			if !inFleet[tc.Namespace] {
				continue
			}
			if p := tc.Status.Initialization.Provisioned; p != nil && *p {
				c++
			} else {
				st = fmt.Sprintf("cluster %s/%s has %s; %s", tc.Namespace, tc.Name, conditionSummary(tc.Status.Conditions), st)
			}
		}
		machines, clusters, stuck = m, c, st
		return m == f.machines && c == len(f.worlds), nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d machines and %d of %d clusters provisioned (%s): %w", machines, f.machines, clusters, len(f.worlds), stuck, err)
	}
	return nil
}

// checkNoJobs fails when the fleet's manager started a Job: nothing is due.
func (f *fleet) checkNoJobs(ctx context.Context) error {
	n, err := f.jobs(ctx)
	if err == nil && n > 0 {
		err = fmt.Errorf("the manager started %d Jobs; an adopted fleet needs none", n)
	}
	return err
}

func (f *fleet) jobs(ctx context.Context) (int, error) {
	n := 0
	for _, w := range f.worlds {
		var jobs batchv1.JobList
		if err := env.Client.List(ctx, &jobs, client.InNamespace(w.ns)); err != nil {
			return 0, err
		}
		n += len(jobs.Items)
	}
	return n, nil
}

// idleRun is what a fleet's manager did in its first resync and over
// the idle minutes after it.
type idleRun struct {
	resync   resyncRun
	sync     time.Duration
	machines int
	took     time.Duration
	cpu      time.Duration
	heap     uint64 // live, at the end
	peak     uint64 // heap objects, live or not, sampled every 10 s
	decodes  int64
	passes   int64
	// failures counts the machine passes of the window that failed.
	failures int64
	traffic  trafficCount
}

// resyncRun is what the manager did in a resync, from its first pass
// until the controllers idled again.
type resyncRun struct {
	took                      time.Duration
	cpu                       time.Duration
	passes, decodes, failures int64
	traffic                   trafficCount
}

func (r idleRun) cpuShare() float64    { return r.cpu.Seconds() / r.took.Seconds() }
func (r idleRun) requestRate() float64 { return float64(r.traffic.requests) / r.took.Seconds() }

// windowResynced tells whether the idle window held a resync of its
// own (a pass per machine), as it may when it is as long as the sync
// period.
func (r idleRun) windowResynced() bool { return r.passes >= int64(r.machines) }

// steadyShare is the share of a core the manager uses over time: the
// idle window's, with one resync every sync period added unless the
// window held one.
func (r idleRun) steadyShare() float64 {
	if r.windowResynced() {
		return r.cpuShare()
	}
	return r.cpuShare() + r.resync.cpu.Seconds()/r.sync.Seconds()
}

// steadyRate is its requests per second over time, the same way.
func (r idleRun) steadyRate() float64 {
	if r.windowResynced() {
		return r.requestRate()
	}
	return r.requestRate() + float64(r.resync.traffic.requests)/r.sync.Seconds()
}

// steadyParts says what the steady share is made of.
func (r idleRun) steadyParts() string {
	if r.windowResynced() {
		return fmt.Sprintf("over an idle window of %s that held a resync", r.took.Round(time.Second))
	}
	return fmt.Sprintf("idle %.2f%%, and a resync every %s: %.1f s CPU, %d machine passes, %d requests, %s",
		r.cpuShare()*100, r.sync, r.resync.cpu.Seconds(), r.resync.passes, r.resync.traffic.requests, r.resync.took.Round(time.Second))
}

// allDecodes counts the states decompressed in the window and the
// resync; allFailures the failed passes.
func (r idleRun) allDecodes() int64  { return r.resync.decodes + r.decodes }
func (r idleRun) allFailures() int64 { return r.resync.failures + r.failures }

func (r idleRun) log(b *testing.B, what string) {
	if r.windowResynced() {
		b.Logf("%s, the idle window held a resync (%d machine passes, %d failed)", what, r.passes, r.failures)
	} else {
		b.Logf("%s, resync: %d machine passes (%d failed) in %s, CPU %s, %d decompressions, %d requests (%s)",
			what, r.resync.passes, r.resync.failures, r.resync.took.Round(time.Second), r.resync.cpu.Round(time.Millisecond), r.resync.decodes,
			r.resync.traffic.requests, r.resync.traffic.top(8))
	}
	b.Logf("%s, idle %s: CPU %s (%.2f%% of a core; steady, with a resync every %s, %.2f%%), live heap %.1f MiB (peak heap objects %.1f MiB), %d machine passes, %d decompressions, %d requests (%.2f/s: %s), %d status writes, %.1f KiB read",
		what, r.took.Round(time.Second), r.cpu.Round(time.Millisecond), r.cpuShare()*100, r.sync, r.steadyShare()*100, mib(r.heap), mib(r.peak), r.passes, r.decodes,
		r.traffic.requests, r.requestRate(), r.traffic.top(5), r.traffic.statusWrites, float64(r.traffic.bytesRead)/1024)
}

// idle lets the fleet idle for d from the end of its cold start, doing
// nothing in the process but sampling the heap every ten seconds. A
// resync that the window catches in progress extends it to that resync's
// end, so that the window holds all of it or none. Unless it held one,
// the manager's first resync, which comes about two sync periods after its
// start, is then waited for and measured on its own. The live heap is
// taken at the end of the window, once the controllers idle.
func (f *fleet) idle(ctx context.Context, d time.Duration, prof profiler) (idleRun, error) {
	r := idleRun{sync: f.sync, machines: f.machines}
	m0, err := readMetrics()
	if err != nil {
		return r, err
	}
	passes0, failures0 := m0.reconciles(machineController), m0.failures(machineController)
	progress("idling for %s", d)
	stopCPU, err := prof.cpu("idle")
	if err != nil {
		return r, err
	}
	defer func() { _ = stopCPU() }()
	decodes0, traffic0, cpu0, start := f.m.engine.Decodes(), f.m.traffic.read(), processCPU(), time.Now()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	end := time.After(d)
	for waiting := true; waiting; {
		select {
		case <-tick.C:
			r.peak = max(r.peak, heapObjects())
		case <-end:
			waiting = false
		case <-ctx.Done():
			return r, ctx.Err()
		}
	}
	if r.passes, err = f.finishResync(ctx, passes0); err != nil {
		return r, err
	}
	r.took, r.cpu = time.Since(start), processCPU()-cpu0
	if err := stopCPU(); err != nil {
		return r, err
	}
	r.decodes, r.traffic = f.m.engine.Decodes()-decodes0, f.m.traffic.read().since(traffic0)
	if r.failures, err = reconcileErrors(machineController); err != nil {
		return r, err
	}
	r.failures -= failures0
	r.heap = liveHeap()
	if err := prof.heap("idle"); err != nil {
		return r, err
	}
	if !r.windowResynced() {
		if r.resync, err = f.awaitResync(ctx, prof); err != nil {
			return r, err
		}
	}
	return r, f.checkNoJobs(ctx)
}

// finishResync returns the machine passes since passes0, once the
// controllers have stayed idle for three seconds: a resync in progress
// (the controllers busy) ends first.
func (f *fleet) finishResync(ctx context.Context, passes0 int64) (int64, error) {
	var passes, last int64 = 0, -1
	quiet := 0
	err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(context.Context) (bool, error) {
		r, err := readMetrics()
		if err != nil {
			return false, err
		}
		passes = r.reconciles(machineController) - passes0
		if !r.busy() && passes == last {
			quiet++
		} else {
			quiet = 0
		}
		last = passes
		return quiet >= 3, nil
	})
	if err != nil {
		return passes, fmt.Errorf("waiting for the controllers to idle at the end of the window (%d machine passes in it): %w", passes, err)
	}
	return passes, nil
}

// awaitResync waits for the manager's first resync, which comes about two
// sync periods after its start (client-go resyncs a handler at the first
// check past its period, and the controllers' handlers join their
// informers after those start), and measures it from the poll before its
// first pass until every machine has passed and the controllers have
// stayed idle for three seconds.
func (f *fleet) awaitResync(ctx context.Context, prof profiler) (resyncRun, error) {
	var rs resyncRun
	m0, err := readMetrics()
	if err != nil {
		return rs, err
	}
	passes0, failures0 := m0.reconciles(machineController), m0.failures(machineController)
	progress("waiting for the first resync (about two sync periods of %s after the start)", f.sync)
	stopCPU, err := prof.cpu("resync")
	if err != nil {
		return rs, err
	}
	defer func() { _ = stopCPU() }()
	var (
		started    bool
		start      time.Time
		cpu0       time.Duration
		decodes0   int64
		traffic0   trafficCount
		quiet      int
		lastPasses int64
	)
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*f.sync+time.Duration(f.machines)*time.Second/2, true, func(context.Context) (bool, error) {
		r, err := readMetrics()
		if err != nil {
			return false, err
		}
		rs.passes = r.reconciles(machineController) - passes0
		if !started {
			if rs.passes == 0 {
				start, cpu0, decodes0, traffic0 = time.Now(), processCPU(), f.m.engine.Decodes(), f.m.traffic.read()
				return false, nil
			}
			started = true
			progress("resync started")
		}
		if rs.passes >= int64(f.machines) && rs.passes == lastPasses && !r.busy() {
			quiet++
		} else {
			quiet = 0
		}
		lastPasses = rs.passes
		if quiet < 3 {
			return false, nil
		}
		rs.took, rs.cpu = time.Since(start), processCPU()-cpu0
		rs.decodes, rs.traffic = f.m.engine.Decodes()-decodes0, f.m.traffic.read().since(traffic0)
		rs.failures = r.failures(machineController) - failures0
		return true, nil
	})
	if err != nil {
		return rs, fmt.Errorf("waiting for the manager's first resync (%d of %d machine passes): %w", rs.passes, f.machines, err)
	}
	return rs, stopCPU()
}

// coldStart is a manager's start over a provisioned fleet.
type coldStart struct {
	took   time.Duration
	passes int64
	// skips counts the passes the new manager skipped: replays of
	// the records of its checkpoint.
	skips int64
	// failures counts the passes that returned an error.
	failures int64
	traffic  trafficCount
	jobs     int
	// changed counts the fleet's objects whose resourceVersion changed.
	changed int
}

func (c coldStart) log(b *testing.B, what string) {
	b.Logf("%s, cold start: caught up in %s, %d machine passes (%d failed; %d passes of every kind replayed from the checkpoint), %d requests (%s), %.1f MiB read, %d status writes, %d Jobs, %d objects changed",
		what, c.took.Round(100*time.Millisecond), c.passes, c.failures, c.skips, c.traffic.requests, c.traffic.top(10), float64(c.traffic.bytesRead)/(1<<20), c.traffic.statusWrites, c.jobs, c.changed)
}

// restart stops the fleet's manager, starts a new one with the client
// limits limits and waits until it has reconciled every object once and
// idles.
func (f *fleet) restart(ctx context.Context, prof profiler, limits rateLimits) (coldStart, error) {
	var c coldStart
	if err := f.m.stop(); err != nil {
		return c, err
	}
	before, err := f.versions(ctx)
	if err != nil {
		return c, err
	}
	m0, err := readMetrics()
	if err != nil {
		return c, err
	}
	machines0, clusters0 := m0.reconciles(machineController), m0.reconciles(clusterController)
	failures0 := m0.failures(machineController) + m0.failures(clusterController)
	progress("restarting the manager over %d machines", f.machines)
	stopCPU, err := prof.cpu("coldstart")
	if err != nil {
		return c, err
	}
	defer func() { _ = stopCPU() }()
	start := time.Now()
	if f.m, err = startManager(ctx, "", limits, f.sync); err != nil {
		return c, err
	}
	var caughtUp time.Time
	var traffic trafficCount
	// A read of the metrics costs more than a pass here: a poll reads
	// them once, four times a second.
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 10*time.Minute+time.Duration(f.machines)*time.Second/5, true, func(context.Context) (bool, error) {
		r, err := readMetrics()
		if err != nil {
			return false, err
		}
		c.passes = r.reconciles(machineController) - machines0
		clusterPasses := r.reconciles(clusterController) - clusters0
		if !r.busy() && c.passes >= int64(f.machines) && clusterPasses >= int64(len(f.worlds)) {
			caughtUp, traffic, c.skips = time.Now(), f.m.traffic.read(), f.m.engine.Skips()
			c.failures = r.failures(machineController) + r.failures(clusterController) - failures0
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return c, fmt.Errorf("waiting for the new manager to catch up (%d of %d machine passes): %w", c.passes, f.machines, err)
	}
	c.took, c.traffic = caughtUp.Sub(start), traffic
	if err := stopCPU(); err != nil {
		return c, err
	}
	// Anything the start would still do shows once it idles.
	if _, err := waitQuiet(ctx, 0, 0, 2*time.Minute); err != nil {
		return c, err
	}
	c.traffic.statusWrites = f.m.traffic.statusWrites.Load()
	if c.jobs, err = f.jobs(ctx); err != nil {
		return c, err
	}
	after, err := f.versions(ctx)
	if err != nil {
		return c, err
	}
	for k, v := range before {
		if after[k] != v {
			c.changed++
		}
	}
	return c, nil
}

// versions maps each of the fleet's TerraformMachines and TerraformClusters
// to its resourceVersion.
func (f *fleet) versions(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, w := range f.worlds {
		for _, l := range []client.ObjectList{&infrav1.TerraformMachineList{}, &infrav1.TerraformClusterList{}} {
			if err := env.Client.List(ctx, l, client.InNamespace(w.ns)); err != nil {
				return nil, err
			}
			items, err := listObjects(l)
			if err != nil {
				return nil, err
			}
			for _, o := range items {
				out[fmt.Sprintf("%T/%s/%s", o, o.GetNamespace(), o.GetName())] = o.GetResourceVersion()
			}
		}
	}
	return out, nil
}

// remove stops the fleet's manager and forgets the fleet's metric series
// (a manager process started after it would never have had them; left in
// the registry, they would count in the next fleet's heap), then stops
// the fleet's control plane, if it has one of its own (stopControlPlane):
// the next fleet starts on an empty one. Deleting a fleet object by
// object took 8 minutes at 5,000 machines.
func (f *fleet) remove(ctx context.Context) error {
	progress("removing the fleet")
	var errs []error
	if f.m != nil {
		errs = append(errs, f.m.stop())
	}
	for _, w := range f.worlds {
		errs = append(errs, forgetSeries(ctx, w.ns))
	}
	if f.stopControlPlane != nil {
		errs = append(errs, f.stopControlPlane())
	}
	return errors.Join(errs...)
}

// ownControlPlane starts a control plane for a fleet, as TestMain's (with
// kube-controller-manager, the shipped roles bound), and makes it the
// package's env until stop, which puts the package's own back and stops
// it (once, however often it is called).
func ownControlPlane(ctx context.Context) (stop func() error, err error) {
	shared := env
	own, err := envtest.Start(envtest.Options{Webhooks: true, ClusterAPICRDs: true, ControllerManager: true})
	if err != nil {
		return nil, fmt.Errorf("starting the fleet's control plane: %w", err)
	}
	env = own
	stop = sync.OnceValue(func() error {
		env = shared
		return own.Stop()
	})
	if err := bindShippedRole(ctx); err != nil {
		return nil, errors.Join(err, stop())
	}
	return stop, nil
}

// forgetSeries deletes the per-object metric series of namespace's
// TerraformMachines and TerraformClusters. A manager deleting them would;
// so would a process started after the removal, which never had them. Left
// in the registry, they would count in the next fleet's heap.
func forgetSeries(ctx context.Context, namespace string) error {
	for kind, l := range map[string]client.ObjectList{state.KindMachine: &infrav1.TerraformMachineList{}, state.KindCluster: &infrav1.TerraformClusterList{}} {
		if err := env.Client.List(ctx, l, client.InNamespace(namespace)); err != nil {
			return err
		}
		objs, err := listObjects(l)
		if err != nil {
			return err
		}
		for _, o := range objs {
			captfmetrics.Forget(kind, namespace, o.GetName())
		}
	}
	return nil
}

// listObjects returns the items of a typed list.
func listObjects(list client.ObjectList) ([]client.Object, error) {
	var out []client.Object
	err := meta.EachListItem(list, func(o runtime.Object) error {
		obj, ok := o.(client.Object)
		if !ok {
			return fmt.Errorf("%T is not an object", o)
		}
		out = append(out, obj)
		return nil
	})
	return out, err
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapObjects is the bytes of heap objects, live or not yet collected.
func heapObjects() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}
