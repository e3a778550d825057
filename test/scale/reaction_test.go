package scale_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// Environment variables of the reaction benchmark.
const (
	// ReactionMachinesEnv sizes the provisioned fleet present while the
	// probes run.
	ReactionMachinesEnv = "CAPTF_SCALE_REACTION_MACHINES"
	// ReactionProbesEnv is how many new machines are timed.
	ReactionProbesEnv = "CAPTF_SCALE_REACTION_PROBES"
)

const (
	defaultReactionMachines = 1000
	defaultReactionProbes   = 40
	// The goals of target 2.
	toJobP50Goal    = 200 * time.Millisecond
	toJobP99Goal    = 2 * time.Second
	toStatusP50Goal = 200 * time.Millisecond
)

// BenchmarkReactionTime is target 2 of make scale: with a fleet of 1,000
// provisioned TerraformMachines (CAPTF_SCALE_REACTION_MACHINES) present
// under a manager restarted with the shipped rate limits, new machines
// (CAPTF_SCALE_REACTION_PROBES, 40) are created one after the other in one
// of the fleet's namespaces, each applied by a real Job that the stand-in
// kubelet runs with the real runner and tofu. Two reactions are timed by
// the benchmark's own informers: from the machine's creation (its
// TerraformMachine, the last object it needs) to its Job, and from the Job
// finished to the TerraformMachine's status.lastRun naming it. Each probe
// starts once the previous one's status showed its Job, so a run's CPU
// (the runtime and providers, here on the manager's cores) is never
// inside a timed window. Each probe must end provisioned by exactly one
// apply Job.
func BenchmarkReactionTime(b *testing.B) {
	spec, ctx := fleetSize(b, ReactionMachinesEnv, defaultReactionMachines)
	probes := count(b, ReactionProbesEnv, defaultReactionProbes)
	for range b.N {
		f := &fleet{machines: spec.machines, sync: spec.sync}
		r, err := f.react(ctx, b, spec.clusters, probes)
		if rerr := f.remove(ctx); rerr != nil && err == nil {
			err = rerr
		}
		if err != nil {
			b.Fatal(err)
		}
		r.report(b, spec.machines+spec.clusters)
	}
}

// reaction is what the probes measured.
type reaction struct {
	toJob, toStatus []time.Duration
}

// report prints target 2's line for probes made with objects present.
func (r reaction) report(b *testing.B, objects int) {
	toJob, toStatus := summarize(r.toJob), summarize(r.toStatus)
	b.ReportMetric(toJob.p50.Seconds()*1000, "to-job-p50-ms")
	b.ReportMetric(toJob.p99.Seconds()*1000, "to-job-p99-ms")
	b.ReportMetric(toStatus.p50.Seconds()*1000, "to-status-p50-ms")
	verdict(2, fmt.Sprintf("new machine to its Job %s; Job finished to status %s; %d probes with %d objects present",
		toJob, toStatus, len(r.toJob), objects),
		fmt.Sprintf("to Job p50 <= %s and p99 <= %s; to status p50 <= %s", toJobP50Goal, toJobP99Goal, toStatusP50Goal),
		toJob.p50 <= toJobP50Goal && toJob.p99 <= toJobP99Goal && toStatus.p50 <= toStatusP50Goal)
}

// react provisions the fleet, restarts its manager with the shipped rate
// limits, and times the probes.
func (f *fleet) react(ctx context.Context, b *testing.B, clusters, probes int) (reaction, error) {
	// A control plane of the fleet's own, stopped after the kubelet below
	// (cleanups run last first).
	stop, err := ownControlPlane(ctx)
	if err != nil {
		return reaction{}, err
	}
	b.Cleanup(func() { _ = stop() })
	if err := f.provision(ctx, b, "react", clusters, fleetState); err != nil {
		return reaction{}, err
	}
	prof, err := newProfiler("react")
	if err != nil {
		return reaction{}, err
	}
	cold, err := f.restart(ctx, prof, shippedLimits)
	if err != nil {
		return reaction{}, err
	}
	cold.log(b, "react")
	return f.probe(ctx, b, probes, prof)
}

// probe times probes new machines, one after the other, in the fleet's
// first namespace, under its running manager.
func (f *fleet) probe(ctx context.Context, b *testing.B, probes int, prof profiler) (reaction, error) {
	var r reaction
	w := f.worlds[0]
	// The kubelet and the probes' watch end with the probes: the fleet's
	// control plane may be stopped next.
	k := kubelet.StartIn(b, env, w.ns, kubelet.ExampleImages(b))
	defer k.Stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen, err := watchProbes(ctx, w.ns)
	if err != nil {
		return r, err
	}
	progress("react: %d probes in %s, one after the other", probes, w.ns)
	stopCPU, err := prof.cpu("reaction")
	if err != nil {
		return r, err
	}
	defer func() { _ = stopCPU() }()
	for i := range probes {
		name := fmt.Sprintf("probe-%03d", i)
		created, err := w.newProbe(ctx, name)
		if err != nil {
			return r, err
		}
		p, err := seen.await(ctx, name, 5*time.Minute)
		if err != nil {
			return r, err
		}
		r.toJob = append(r.toJob, p.jobSeen.Sub(created))
		r.toStatus = append(r.toStatus, p.statusSeen.Sub(p.jobDone))
	}
	if err := stopCPU(); err != nil {
		return r, err
	}
	return r, seen.check(ctx, w.ns, probes)
}

// newProbe creates what a new machine needs (its bootstrap data Secret and
// Machine, then its TerraformMachine, without a state) and returns when
// the TerraformMachine's create returned.
func (w *world) newProbe(ctx context.Context, name string) (time.Time, error) {
	boot, m, tm := w.machineObjects(name)
	if err := createAll(ctx, boot, m); err != nil {
		return time.Time{}, err
	}
	tm.OwnerReferences = ownedBy("Machine", m)
	err := createAll(ctx, tm)
	return time.Now(), err
}

// probe is when the benchmark's informers saw a probe's Job appear and
// finish, and its status name the Job.
type probe struct {
	job                          string
	jobSeen, jobDone, statusSeen time.Time
	// applies counts the probe's apply Jobs.
	applies int
	failed  bool
}

// sightings are the probes' events as the benchmark's informers deliver
// them, timed on arrival.
type sightings struct {
	mu     sync.Mutex
	probes map[string]*probe
	// jobs maps a Job to its probe.
	jobs    map[string]string
	changed chan struct{}
}

// watchProbes starts informers of the namespace's Jobs and
// TerraformMachines that time what they see of the probes.
func watchProbes(ctx context.Context, ns string) (*sightings, error) {
	s := &sightings{probes: map[string]*probe{}, jobs: map[string]string{}, changed: make(chan struct{}, 1)}
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		return nil, err
	}
	for obj, see := range map[client.Object]func(any){&batchv1.Job{}: s.job, &infrav1.TerraformMachine{}: s.machine} {
		inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, o any) { see(o) }}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the probes' informers did not sync")
	}
	return s, nil
}

func (s *sightings) get(name string) *probe {
	p := s.probes[name]
	if p == nil {
		p = &probe{}
		s.probes[name] = p
	}
	return p
}

func (s *sightings) poke() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *sightings) job(o any) {
	now := time.Now()
	j, ok := o.(*batchv1.Job)
	if !ok || j.Labels[infrav1.OperationLabel] != string(infrav1.OperationApply) {
		return
	}
	var owner string
	for _, ref := range j.OwnerReferences {
		if ref.Kind == state.KindMachine {
			owner = ref.Name
		}
	}
	if owner == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.get(owner)
	if _, known := s.jobs[j.Name]; !known {
		s.jobs[j.Name] = owner
		p.applies++
		if p.job == "" {
			p.job, p.jobSeen = j.Name, now
		}
	}
	if j.Name != p.job || !p.jobDone.IsZero() {
		return
	}
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			p.jobDone, p.failed = now, c.Type == batchv1.JobFailed
			s.poke()
		}
	}
}

func (s *sightings) machine(o any) {
	now := time.Now()
	tm, ok := o.(*infrav1.TerraformMachine)
	if !ok || tm.Status.LastRun == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.get(tm.Name)
	if p.job != "" && tm.Status.LastRun.Job == p.job && p.statusSeen.IsZero() {
		p.statusSeen = now
		s.poke()
	}
}

// await waits until the probe's status named its finished Job.
func (s *sightings) await(ctx context.Context, name string, timeout time.Duration) (probe, error) {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		p := *s.get(name)
		s.mu.Unlock()
		switch {
		case p.failed:
			return p, fmt.Errorf("probe %s: its Job %s failed", name, p.job)
		case !p.statusSeen.IsZero() && !p.jobDone.IsZero():
			return p, nil
		}
		select {
		case <-s.changed:
		case <-deadline:
			return p, fmt.Errorf("probe %s: no Job finished and shown in its status after %s (Job %q seen at %s)", name, timeout, p.job, p.jobSeen.Format(time.TimeOnly))
		case <-ctx.Done():
			return p, ctx.Err()
		}
	}
}

// check fails unless every probe is provisioned by exactly one apply Job.
func (s *sightings) check(ctx context.Context, ns string, probes int) error {
	var tms infrav1.TerraformMachineList
	if err := env.Client.List(ctx, &tms, client.InNamespace(ns)); err != nil {
		return err
	}
	provisioned := 0
	for i := range tms.Items {
		tm := &tms.Items[i]
		if p, ok := s.probes[tm.Name]; ok && ptr.Deref(tm.Status.Initialization.Provisioned, false) {
			if p.applies != 1 {
				return fmt.Errorf("probe %s was applied by %d Jobs, want 1", tm.Name, p.applies)
			}
			provisioned++
		}
	}
	if provisioned != probes {
		return fmt.Errorf("%d of %d probes provisioned", provisioned, probes)
	}
	return nil
}

// distribution is a sample's quantiles.
type distribution struct {
	n                       int
	p50, p90, p99, min, max time.Duration
}

func summarize(d []time.Duration) distribution {
	s := slices.Clone(d)
	slices.Sort(s)
	q := func(p float64) time.Duration {
		if len(s) == 0 {
			return 0
		}
		return s[max(0, int(math.Ceil(p*float64(len(s))))-1)]
	}
	out := distribution{n: len(s), p50: q(0.5), p90: q(0.9), p99: q(0.99)}
	if len(s) > 0 {
		out.min, out.max = s[0], s[len(s)-1]
	}
	return out
}

func (d distribution) String() string {
	r := func(v time.Duration) time.Duration { return v.Round(time.Millisecond) }
	return fmt.Sprintf("min %s, p50 %s, p90 %s, p99 %s, max %s", r(d.min), r(d.p50), r(d.p90), r(d.p99), r(d.max))
}
