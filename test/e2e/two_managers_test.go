package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// twoManagersAtOnce runs two managers at once in e, leader election off,
// as after a split brain: both reconcile every object while the
// quickstart provisions, its pool scales from 2 to 3 and its Cluster is
// deleted. A user sees no duplicate Job of an attempt, never two
// unfinished Jobs of one object, no run failing on the state lock, and
// each object provisioned and destroyed once.
func twoManagersAtOnce(t *testing.T, ctx context.Context, e *processEnv) {
	began := time.Now()
	managers := []*devProcess{e.startManager(t, "manager-1"), e.startManager(t, "manager-2")}
	t.Logf("two managers started in %s", time.Since(began).Round(time.Second))
	f, cs := e.flow(t, "two-managers")
	watching, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	jobs := watchJobs(watching, cs, f.ns)
	locks := watchLockErrors(watching, f)
	t.Cleanup(func() {
		if t.Failed() {
			for _, j := range jobs.snapshot() {
				t.Logf("Job %s (%s %s a%s): created %s, finished %v, succeeded %v, gone %v",
					j.name, j.object(), j.op, j.attempt, j.created.Format(time.TimeOnly), j.finished, j.succeeded, j.gone)
			}
		}
	})

	objs := f.quickstart("") // the example's own runtimes: both run
	f.create(ctx, objs)
	workload := []string{"TerraformCluster/quickstart", "TerraformMachine/quickstart-cp-0", "TerraformMachine/quickstart-worker-0", "TerraformMachinePool/quickstart-pool"}
	f.waitFor(ctx, "every object is provisioned, the pool with 2 instances", jobWait, func(ctx context.Context) (bool, string, error) {
		for _, o := range workload {
			if ok, why, err := f.provisioned(ctx, o, 2); !ok || err != nil {
				return false, why, err
			}
			if _, succeeded := count(jobs.snapshot(), o, string(infrav1.OperationApply)); succeeded == 0 {
				return false, "no successful apply Job of " + o + " seen yet", nil
			}
		}
		return true, "", nil
	})

	before := poolApplies(jobs.snapshot())
	f.scalePool(ctx, 3)
	f.waitFor(ctx, "the pool is applied again with 3 instances", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		if ok, why, err := f.provisioned(ctx, "TerraformMachinePool/quickstart-pool", 3); !ok || err != nil {
			return false, why, err
		}
		after := poolApplies(jobs.snapshot())
		return len(after) > len(before), fmt.Sprintf("successful pool applies seen: %v", after), nil
	})

	f.teardown(ctx, objs, "")
	f.waitFor(ctx, "the Job watch saw every Job go", controllerWait, func(context.Context) (bool, string, error) {
		for _, j := range jobs.snapshot() {
			if !j.gone {
				return false, "Job " + j.name + " not seen deleted", nil
			}
		}
		return true, "", nil
	})
	stopWatching()
	<-jobs.done
	<-locks.done
	for _, m := range managers {
		select {
		case <-m.exited:
			t.Errorf("%s exited during the test (%v)\n%s", m.name, m.err, m.transcript())
		default:
			m.kill()
		}
	}
	f.checkTwoManagers(context.WithoutCancel(ctx), jobs, locks, workload, managers)
	t.Logf("wall time %s", time.Since(began).Round(time.Second))
}

// provisioned says whether the workload object kind/name is provisioned
// and Ready, a pool with the given number of instances.
func (f *flow) provisioned(ctx context.Context, object string, instances int32) (bool, string, error) {
	kind, name, _ := strings.Cut(object, "/")
	var st infrav1.WorkspaceStatus
	switch kind {
	case "TerraformCluster":
		var o infrav1.TerraformCluster
		if _, err := f.get(ctx, name, &o); err != nil {
			return false, "", err
		}
		st = o.Status.WorkspaceStatus
	case "TerraformMachine":
		var o infrav1.TerraformMachine
		if _, err := f.get(ctx, name, &o); err != nil {
			return false, "", err
		}
		st = o.Status.WorkspaceStatus
	case "TerraformMachinePool":
		var o infrav1.TerraformMachinePool
		if _, err := f.get(ctx, name, &o); err != nil {
			return false, "", err
		}
		st = o.Status.WorkspaceStatus
		if len(o.Spec.ProviderIDList) != int(instances) || o.Status.Replicas == nil || *o.Status.Replicas != instances {
			return false, fmt.Sprintf("%s: providerIDList %v", object, o.Spec.ProviderIDList), nil
		}
	}
	return provisionedReady(st), fmt.Sprintf("%s: provisioned %v, %s", object, ptrTrue(st.Initialization.Provisioned), ready(st.Conditions)), nil
}

// scalePool sets the quickstart MachinePool's replicas.
func (f *flow) scalePool(ctx context.Context, replicas int32) {
	f.t.Helper()
	var mp clusterv1.MachinePool
	if _, err := f.get(ctx, "quickstart-pool", &mp); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(mp.DeepCopy())
	mp.Spec.Replicas = ptr.To(replicas)
	if err := f.env.Client.Patch(ctx, &mp, patch); err != nil {
		f.t.Fatal(err)
	}
}

// poolApplies names the successful apply Jobs of the pool.
func poolApplies(jobs []seenJob) []string {
	var out []string
	for _, j := range jobs {
		if j.object() == "TerraformMachinePool/quickstart-pool" && j.op == string(infrav1.OperationApply) && j.succeeded {
			out = append(out, j.name)
		}
	}
	return out
}

// checkTwoManagers logs the figures of the run and asserts them.
func (f *flow) checkTwoManagers(ctx context.Context, jobs *jobWatch, locks *lockErrors, workload []string, managers []*devProcess) {
	t := f.t
	seen := jobs.snapshot()
	dups := duplicates(seen)
	var events eventsv1.EventList
	if err := f.env.Client.List(ctx, &events, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	var failed, lockEvents, forceUnlocks []string
	for _, ev := range events.Items {
		line := fmt.Sprintf("%s %s/%s: %s", ev.Reason, ev.Regarding.Kind, ev.Regarding.Name, ev.Note)
		switch ev.Reason {
		case "JobFailed":
			failed = append(failed, line)
			if strings.Contains(strings.ToLower(ev.Note), "lock") {
				lockEvents = append(lockEvents, line)
			}
		case "ForceUnlocked":
			forceUnlocks = append(forceUnlocks, line)
		}
	}
	lockStatus := locks.seen()
	t.Logf("figures: %d Jobs seen (watch listed %d times), %d duplicate Jobs of an attempt, %d Jobs started while another of the object ran, "+
		"%d lock failures (%d JobFailed events naming the lock, %d statuses), %d JobFailed events, %d ForceUnlocked events",
		len(seen), jobs.relists, len(dups), len(jobs.overlaps), len(lockEvents)+len(lockStatus), len(lockEvents), len(lockStatus),
		len(failed), len(forceUnlocks))
	for _, o := range workload {
		applies, appliesOK := count(seen, o, string(infrav1.OperationApply))
		destroys, destroysOK := count(seen, o, string(infrav1.OperationDestroy))
		t.Logf("figures: %s: apply Jobs %d (%d succeeded), destroy Jobs %d (%d succeeded)", o, applies, appliesOK, destroys, destroysOK)
		if destroys != 1 || destroysOK != 1 {
			t.Errorf("%s: %d destroy Jobs, %d of them successful; want one, successful", o, destroys, destroysOK)
		}
		if appliesOK == 0 {
			t.Errorf("%s: no successful apply Job", o)
		}
	}
	for _, m := range managers {
		log, _ := os.ReadFile(m.stderr)
		t.Logf("figures: %s logged namespace %s %d times and %d reconciler errors", m.name,
			f.ns, strings.Count(string(log), f.ns), strings.Count(string(log), "Reconciler error"))
		// What the two managers ran into, retried: conflicts on writes
		// the other made first, objects the other just finished deleting.
		for _, line := range strings.Split(string(log), "\n") {
			if _, after, ok := strings.Cut(line, "Reconciler error"); ok {
				t.Logf("%s: Reconciler error%.300s", m.name, after)
			}
		}
	}
	for _, d := range dups {
		t.Errorf("duplicate Jobs of one attempt: %s", d)
	}
	for _, o := range jobs.overlaps {
		t.Errorf("two unfinished Jobs of one object: %s", o)
	}
	for _, l := range slices.Concat(lockEvents, lockStatus) {
		t.Errorf("a run failed on the state lock: %s", l)
	}
	for _, l := range locks.lostState() {
		t.Errorf("the state was lost or unreadable: %s", l)
	}
	for _, l := range slices.Concat(failed, forceUnlocks) {
		t.Logf("event: %s", l)
	}
}

// lockErrors records, polling the workload objects, every last run that
// failed on the state lock and every StateLocked condition: what a user
// sees of a lock failure in `kubectl get -o yaml`. It also records every
// StateLost or StateCorrupt condition.
type lockErrors struct {
	mu   sync.Mutex
	set  map[string]bool
	lost map[string]bool
	done chan struct{}
}

func watchLockErrors(ctx context.Context, f *flow) *lockErrors {
	l := &lockErrors{set: map[string]bool{}, lost: map[string]bool{}, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			l.poll(ctx, f)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return l
}

func (l *lockErrors) poll(ctx context.Context, f *flow) {
	var tcs infrav1.TerraformClusterList
	var tms infrav1.TerraformMachineList
	var tmps infrav1.TerraformMachinePoolList
	statuses := map[string]infrav1.WorkspaceStatus{}
	if f.env.Client.List(ctx, &tcs, client.InNamespace(f.ns)) == nil {
		for _, o := range tcs.Items {
			statuses["TerraformCluster/"+o.Name] = o.Status.WorkspaceStatus
		}
	}
	if f.env.Client.List(ctx, &tms, client.InNamespace(f.ns)) == nil {
		for _, o := range tms.Items {
			statuses["TerraformMachine/"+o.Name] = o.Status.WorkspaceStatus
		}
	}
	if f.env.Client.List(ctx, &tmps, client.InNamespace(f.ns)) == nil {
		for _, o := range tmps.Items {
			statuses["TerraformMachinePool/"+o.Name] = o.Status.WorkspaceStatus
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for object, st := range statuses {
		if lr := st.LastRun; lr != nil && lr.Error != nil &&
			strings.Contains(strings.ToLower(lr.Error.Summary+" "+lr.Error.Step), "lock") {
			l.set[fmt.Sprintf("%s: status.lastRun of Job %s: %s in step %s: %s", object, lr.Job, lr.Error.Kind, lr.Error.Step, lr.Error.Summary)] = true
		}
		for _, c := range st.Conditions {
			line := fmt.Sprintf("%s: condition %s=%s %s: %s", object, c.Type, c.Status, c.Reason, c.Message)
			switch c.Reason {
			case infrav1.StateLockedReason:
				l.set[line] = true
			case infrav1.StateLostReason, infrav1.StateCorruptReason:
				l.lost[line] = true
			}
		}
	}
}

// seen lists the lock failures.
func (l *lockErrors) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.set))
}

// lostState lists the StateLost and StateCorrupt conditions.
func (l *lockErrors) lostState() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.lost))
}
