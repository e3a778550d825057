package scale_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"captf.io/captf/internal/test/envtest"
)

// Gzipped state sizes of the two phases: a small machine's and a large
// one's (the kubernetes backend's limit is 1 MiB per Secret).
const (
	smallState = 4 << 10
	largeState = 256 << 10
)

// Environment variables that override how many TerraformMachines the
// benchmark creates: MachinesEnv those of the headline figures, with
// small states; LargeMachinesEnv those of the small/large comparison
// (default a quarter of them).
const (
	MachinesEnv      = "CAPTF_SCALE_MACHINES"
	LargeMachinesEnv = "CAPTF_SCALE_LARGE_MACHINES"
)

const defaultMachines = 1000

func count(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number of machines", name, v)
	}
	return n
}

// BenchmarkMachineMemory measures the manager with many TerraformMachines
// provisioned from states as a successful apply leaves them, with no Job
// ever due. A first phase grows to n machines (1000 unless
// CAPTF_SCALE_MACHINES says otherwise) with small states, stopping at m
// machines (CAPTF_SCALE_LARGE_MACHINES, default n/4) to measure a
// baseline; a second phase, in a fresh namespace under a fresh manager
// watching only that namespace, provisions m machines with large states.
// At every stop it waits for all machines to be provisioned and the
// controllers to idle, takes the live heap, then reconciles every machine
// once more with nothing changed (an idle pass). It reports:
//
//   - heap-large/small: the live heap the m machines added to the idle
//     manager, large states over small ones. ≈1 when, as DESIGN.md
//     requires, memory does not grow with state size.
//   - heap-B/machine: that heap per machine for n small machines.
//   - decodes/object: state decompressions per object (the machines and
//     their TerraformCluster) until all are provisioned and idle; 1 when
//     each state is decompressed once.
//   - decodes/pass: decompressions per machine pass in the idle passes;
//     0 when unchanged states are not read again.
//   - alloc-B/pass and pass-alloc-large/small: bytes the process
//     allocates per idle machine pass with m large states, and that over
//     the same with m small ones.
//
// A few machines with large states go first, unmeasured, so that what a
// process builds once (encoding/json's and the contract schemas' caches,
// the benchmark client's connection buffers) is there for every phase.
//
// The comparison runs with fewer machines because a manager converges
// more slowly than linearly in the machines of a namespace (every pass
// reads and may rewrite the credentials mirror, which holds one owner
// reference per machine), and `go test` stops a package after 10 minutes
// by default.
func BenchmarkMachineMemory(b *testing.B) {
	envtest.Require(b, env)
	n := count(b, MachinesEnv, defaultMachines)
	m := min(count(b, LargeMachinesEnv, max(1, n/4)), n)
	ctx := b.Context()
	if err := bindShippedRole(ctx); err != nil {
		b.Fatal(err)
	}
	if err := warmUp(ctx); err != nil {
		b.Fatalf("warming up: %v", err)
	}
	var base, headline, large checkpoint
	for range b.N {
		small, err := startPhase(ctx, "small", smallState)
		if err != nil {
			b.Fatal(err)
		}
		base, err = small.grow(ctx, m)
		if err == nil && n > m {
			headline, err = small.grow(ctx, n)
		} else {
			headline = base
		}
		if serr := small.stop(); err == nil {
			err = serr
		}
		if err != nil {
			b.Fatalf("small states: %v", err)
		}
		lp, err := startPhase(ctx, "large", largeState)
		if err != nil {
			b.Fatal(err)
		}
		large, err = lp.grow(ctx, m)
		if serr := lp.stop(); err == nil {
			err = serr
		}
		if err != nil {
			b.Fatalf("large states: %v", err)
		}
		for _, c := range []checkpoint{base, headline, large} {
			c.log(b)
		}
	}
	if base.machineHeap() > 0 {
		b.ReportMetric(large.machineHeap()/base.machineHeap(), "heap-large/small")
	}
	b.ReportMetric(headline.machineHeap()/float64(headline.machines), "heap-B/machine")
	b.ReportMetric(float64(headline.decodes+large.decodes)/float64(headline.machines+large.machines+2), "decodes/object")
	passes := base.pass.passes + headline.pass.passes + large.pass.passes
	if passes > 0 {
		b.ReportMetric(float64(base.pass.decodes+headline.pass.decodes+large.pass.decodes)/float64(passes), "decodes/pass")
	}
	if base.pass.passes > 0 && large.pass.passes > 0 {
		b.ReportMetric(large.pass.perPass(), "alloc-B/pass")
		b.ReportMetric(large.pass.perPass()/base.pass.perPass(), "pass-alloc-large/small")
	}
}

// checkpoint is what a phase measured once it reached a number of
// machines.
type checkpoint struct {
	phase    string
	machines int
	// heapIdle and heapSteady are the live heap of the idle manager before
	// any machine, and now.
	heapIdle, heapSteady uint64
	// stateBytes sums the gzipped machine states.
	stateBytes int64
	// elapsed is the time since the phase created its first object.
	elapsed time.Duration
	// decodes, passes and failures count the state decompressions, machine
	// passes and failed machine passes since the phase started, before the
	// idle pass.
	decodes, passes, failures int64
	pass                      idlePass
}

// idlePass is one reconcile of every machine with nothing changed.
type idlePass struct {
	passes, decodes int64
	// alloc leaves out what reading the metrics allocated.
	alloc float64
	time  time.Duration
}

func (p idlePass) perPass() float64 { return p.alloc / float64(p.passes) }

// machineHeap is the live heap the machines added to the idle manager.
func (c checkpoint) machineHeap() float64 { return float64(c.heapSteady) - float64(c.heapIdle) }

func (c checkpoint) log(b *testing.B) {
	b.Logf("%s, %d machines: gzipped state %.1f KiB each; provisioned and idle %s after the first object, in %d machine passes (%d failed) and %d decompressions",
		c.phase, c.machines, float64(c.stateBytes)/float64(c.machines)/1024, c.elapsed.Round(time.Millisecond), c.passes, c.failures, c.decodes)
	b.Logf("%s, %d machines: live heap %.1f MiB idle manager, %.1f MiB steady: %.1f KiB per machine",
		c.phase, c.machines, mib(c.heapIdle), mib(c.heapSteady), c.machineHeap()/float64(c.machines)/1024)
	b.Logf("%s, %d machines: idle pass: %d machine passes in %s, %d decompressions, %.1f KiB allocated per pass",
		c.phase, c.machines, c.pass.passes, c.pass.time.Round(time.Millisecond), c.pass.decodes, c.pass.perPass()/1024)
}

func mib(v uint64) float64 { return float64(v) / (1 << 20) }

// warmUp provisions a few machines with large states under a manager of
// their own, and stops it.
func warmUp(ctx context.Context) error {
	p, err := startPhase(ctx, "warmup", largeState)
	if err != nil {
		return err
	}
	_, err = p.grow(ctx, 8)
	if serr := p.stop(); err == nil {
		err = serr
	}
	return err
}
