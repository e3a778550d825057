package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/setup"
)

// Leader election as the Deployment runs it (--leader-elect, the default
// lease of 15 s): of two managers only the leader reconciles, and the
// standby answers the webhooks; SIGKILLed
// while the quickstart provisions, the other takes the lease once it
// expired and finishes the work with no duplicate Job and no two Jobs of
// an object at once; stopped with SIGTERM, the leader releases the lease
// at once.
func leaderFailover(t *testing.T, ctx context.Context, e *processEnv, check manager) {
	t.Helper()
	const leaseDuration = 15 * time.Second // setup's default, which the Deployment keeps
	f, cs := e.flow(t, "leader-failover")
	watching, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	jobs := watchJobs(watching, cs, f.ns)

	candidates := []*devProcess{e.startManager(t, "leader-1", "--leader-elect"), e.startManager(t, "leader-2", "--leader-elect")}
	var leader, standby *devProcess
	f.waitFor(ctx, "one manager leads", controllerWait, func(context.Context) (bool, string, error) {
		leading := 0
		for i, m := range candidates {
			if leads(m) {
				leader, standby = m, candidates[1-i]
				leading++
			}
		}
		return leading == 1, fmt.Sprintf("%d managers logged that they lead", leading), nil
	})
	first := f.lease(ctx)

	objs := pick(f.quickstart(""), append(f.base(), oneMachine...)...)
	f.create(ctx, objs)
	f.waitFor(ctx, "a Job of the quickstart runs", controllerWait, func(context.Context) (bool, string, error) {
		return len(jobs.snapshot()) > 0, "no Job yet", nil
	})
	if reconciles(standby) {
		t.Errorf("the standby %s started its controllers while %s leads", standby.name, leader.name)
	}

	before := f.lease(ctx)
	leader.kill()
	killed := time.Now()
	// The standby answers the webhooks before it leads: the webhook
	// server runs on every replica.
	check.denies(ctx, "standby")
	if leads(standby) {
		t.Logf("the standby led already when its webhook answered (%s after the kill): not a proof that a standby answers", time.Since(killed).Round(time.Millisecond))
	} else {
		t.Logf("the standby answered the webhook %s after the kill, before leading", time.Since(killed).Round(time.Millisecond))
	}
	var taken *coordinationv1.Lease
	f.waitFor(ctx, "the standby takes the lease", 4*leaseDuration, func(ctx context.Context) (bool, string, error) {
		l, err := f.getLease(ctx)
		if err != nil {
			return false, "", err
		}
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		if holder == "" || holder == ptr.Deref(first.Spec.HolderIdentity, "") || l.Spec.AcquireTime == nil {
			return false, "held by " + holder, nil
		}
		taken = l
		return true, "", nil
	})
	failover := time.Since(killed)
	f.waitFor(ctx, standby.name+" says it leads", time.Minute, func(context.Context) (bool, string, error) {
		return leads(standby), "the lease is held by " + ptr.Deref(taken.Spec.HolderIdentity, ""), nil
	})
	t.Logf("figures: the standby led %s after the leader was SIGKILLed (lease %s), %s after the last renewal seen before the kill",
		failover.Round(100*time.Millisecond), leaseDuration, taken.Spec.AcquireTime.Sub(before.Spec.RenewTime.Time).Round(100*time.Millisecond))
	if failover > 3*leaseDuration {
		t.Errorf("the standby took %s to lead, more than three times the lease duration %s", failover, leaseDuration)
	}

	workload := []string{"TerraformCluster/quickstart", "TerraformMachine/quickstart-worker-0"}
	f.waitFor(ctx, "the new leader provisions everything", jobWait, func(ctx context.Context) (bool, string, error) {
		for _, o := range workload {
			if ok, why, err := f.provisioned(ctx, o, 0); !ok || err != nil {
				return false, why, err
			}
		}
		return true, "", nil
	})
	if !reconciles(standby) {
		t.Errorf("the new leader %s provisioned without logging its controllers' start", standby.name)
	}
	stopWatching()
	<-jobs.done
	for _, d := range duplicates(jobs.snapshot()) {
		t.Errorf("duplicate Jobs of one attempt across the failover: %s", d)
	}
	for _, o := range jobs.overlaps {
		t.Errorf("two unfinished Jobs of one object across the failover: %s", o)
	}

	if err := standby.stop(time.Minute); err != nil {
		t.Errorf("the leader did not stop cleanly on SIGTERM: %v\n%s", err, standby.transcript())
	}
	if l := f.lease(ctx); ptr.Deref(l.Spec.HolderIdentity, "") != "" {
		t.Errorf("the leader stopped with SIGTERM but the lease is still held by %s: the next leader waits %s", ptr.Deref(l.Spec.HolderIdentity, ""), leaseDuration)
	}
}

// lease reads the managers' leader election Lease.
func (f *flow) lease(ctx context.Context) *coordinationv1.Lease {
	f.t.Helper()
	l, err := f.getLease(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

func (f *flow) getLease(ctx context.Context) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	return l, f.env.Client.Get(ctx, client.ObjectKey{Namespace: "captf-system", Name: setup.LeaderElectionID}, l)
}

// leads says whether the manager logged that it acquired the lease.
func leads(m *devProcess) bool {
	return logged(m, acquiredLease)
}

// reconciles says whether the manager started the workers of the
// TerraformCluster controller, which only a leader does.
func reconciles(m *devProcess) bool {
	return logged(m, clusterWorkers)
}

var (
	acquiredLease  = regexp.MustCompile(`(?i)successfully acquired lease.*captf-system/` + setup.LeaderElectionID + `\b`)
	clusterWorkers = regexp.MustCompile(`Starting workers.*controller"?[=:]"terraformcluster"`)
)

// logged says whether a line of the manager's stderr matches re.
func logged(m *devProcess, re *regexp.Regexp) bool {
	log, _ := os.ReadFile(m.stderr)
	return re.Match(log)
}
