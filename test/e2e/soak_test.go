//go:build captfsoak

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
)

// The crash soak (`make soak`): on an environment whose manager runs as a
// process of its own, built with the crash points (tag captfsoak), two
// workers provision the quickstart (a cluster, two machines and a pool,
// on both runtimes), change it (the cluster moves to the other runtime),
// scale its pool and delete it (foreground and background in turn), round
// after round for SOAK_DURATION (10m by default), while the manager is
// killed with SIGKILL every few seconds and at the named crash points
// inside a pass, and restarted. It prints, and asserts at 0, what a user
// would notice of a crash: duplicate Jobs of an attempt, two pods of one
// object alive at once, runs failed on the state lock, finished Jobs never
// bookkept, state lost or unreadable, applied records that disagree with
// the state, objects gone without a destroy, and objects left after the
// teardown.
func TestSoak(t *testing.T) {
	duration := envDuration(t, "SOAK_DURATION", 10*time.Minute)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), duration+20*time.Minute)
	defer cancel()
	e := startWithoutManager(t, ctx, "captf-soak-", "-tags", "captfsoak")
	cs, err := kubernetes.NewForConfig(adminConfig(t, e.kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	env := &devenv.Env{Client: adminClient(t, e.kubeconfig), Repo: e.root}
	watching, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	jobs := watchJobs(watching, cs, metav1.NamespaceAll)
	pods := watchPods(watching, cs)
	killer := superviseManager(t, e, os.Getenv("SOAK_CRASH_PROBABILITY"))
	t.Logf("the environment started in %s; the soak runs %s", time.Since(began).Round(time.Second), duration)

	s := &soak{jobs: jobs, duration: duration, deadline: time.Now().Add(duration)}
	t.Run("workers", func(t *testing.T) {
		for w := range 2 {
			t.Run(fmt.Sprintf("soak-%d", w), func(t *testing.T) {
				t.Parallel()
				f := &flow{t: t, ns: fmt.Sprintf("soak-%d", w), env: env}
				locks := watchLockErrors(watching, f)
				for round := 0; round == 0 || time.Now().Before(s.deadline); round++ {
					s.round(ctx, f, round)
				}
				s.addLocks(locks.seen())
				for _, l := range locks.lostState() {
					s.note(&s.stateBad, "%s", l)
				}
			})
		}
	})
	kills := killer.stop()
	stopWatching()
	<-jobs.done
	<-pods.done
	s.report(t, context.WithoutCancel(ctx), env, kills, pods)
	if err := e.up.stop(2 * time.Minute); err != nil {
		t.Errorf("captf-dev up did not stop cleanly on SIGTERM: %v\n%s", err, e.up.transcript())
	}
	t.Logf("wall time %s", time.Since(began).Round(time.Second))
}

// soak gathers what the workers' checks found.
type soak struct {
	jobs     *jobWatch
	duration time.Duration
	deadline time.Time

	mu        sync.Mutex
	rounds    int
	unbooked  []string // finished Jobs still not bookkept at a checkpoint
	stateBad  []string // state that did not read back at a checkpoint
	disagree  []string // applied records whose inputs hash is not the state's
	lockFails []string
}

func (s *soak) note(list *[]string, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*list = append(*list, fmt.Sprintf(format, args...))
}

func (s *soak) addLocks(seen []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lockFails = append(s.lockFails, seen...)
}

var soakWorkload = []string{"TerraformCluster/quickstart", "TerraformMachine/quickstart-cp-0", "TerraformMachine/quickstart-worker-0", "TerraformMachinePool/quickstart-pool"}

// round provisions the quickstart, checks it, moves its cluster to the
// other runtime and scales its pool, checks again, and deletes it.
func (s *soak) round(ctx context.Context, f *flow, round int) {
	began := time.Now()
	objs := f.quickstart("")
	f.waitFor(ctx, "the quickstart is created", 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		err := devenv.Create(ctx, f.env.Client, copies(objs)) // the webhooks are down while the manager is
		return err == nil, "", err
	})
	s.waitProvisioned(ctx, f, 2)
	s.checkpoint(ctx, f)

	var tc infrav1.TerraformCluster
	f.waitFor(ctx, "the cluster moves to Terraform, the pool to 3 instances", time.Minute, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		patch := client.MergeFrom(tc.DeepCopy())
		tc.Spec.Source.Image = devenv.ExampleImage("noop-cluster", "terraform")
		if err := f.env.Client.Patch(ctx, &tc, patch); err != nil {
			return false, "", err
		}
		var mp clusterv1.MachinePool
		if _, err := f.get(ctx, "quickstart-pool", &mp); err != nil {
			return false, "", err
		}
		mpPatch := client.MergeFrom(mp.DeepCopy())
		mp.Spec.Replicas = ptr.To[int32](3)
		return true, "", f.env.Client.Patch(ctx, &mp, mpPatch)
	})
	s.waitProvisioned(ctx, f, 3)
	f.waitFor(ctx, "the cluster ran on Terraform", 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		st := tc.Status.WorkspaceStatus
		lr, src := st.LastRun, st.Source
		ok := lr != nil && lr.Operation == infrav1.OperationApply && lr.Error == nil && src != nil && strings.HasSuffix(src.Image, ":terraform")
		return ok && provisionedReady(st), fmt.Sprintf("last run %+v, source %+v", lr, src), nil
	})
	s.checkpoint(ctx, f)

	policy := metav1.DeletePropagationBackground
	if round%2 == 1 {
		policy = metav1.DeletePropagationForeground
	}
	f.waitFor(ctx, "the Cluster is deleted with "+string(policy)+" propagation", time.Minute, func(ctx context.Context) (bool, string, error) {
		err := f.env.Client.Delete(ctx, pick(objs, "Cluster/quickstart")[0], client.PropagationPolicy(policy))
		return client.IgnoreNotFound(err) == nil, "", client.IgnoreNotFound(err)
	})
	f.teardown(ctx, objs, "")
	s.mu.Lock()
	s.rounds++
	s.mu.Unlock()
	f.t.Logf("round %d done in %s", round, time.Since(began).Round(time.Second))
}

// waitProvisioned waits until every workload object is provisioned and
// Ready, the pool with the given number of instances.
func (s *soak) waitProvisioned(ctx context.Context, f *flow, instances int32) {
	f.waitFor(ctx, fmt.Sprintf("the quickstart is provisioned, its pool with %d instances", instances), 6*time.Minute, func(ctx context.Context) (bool, string, error) {
		for _, o := range soakWorkload {
			if ok, why, err := f.provisioned(ctx, o, instances); !ok || err != nil {
				return false, why, err
			}
		}
		return true, "", nil
	})
}

// checkpoint, with every object provisioned and no Job running: each
// finished Job gets bookkept, each state reads, and each applied record
// names the inputs the state was last applied with.
func (s *soak) checkpoint(ctx context.Context, f *flow) {
	var pending string
	err := waitUntil(ctx, 2*time.Minute, func() bool {
		pending = ""
		for _, j := range s.jobs.snapshot() {
			if j.namespace == f.ns && j.finished && !j.gone && !j.bookkept {
				pending += " " + j.name
			}
		}
		return pending == ""
	})
	if err != nil {
		s.note(&s.unbooked, "%s: finished Jobs not bookkept after 2m:%s", f.ns, pending)
	}
	for _, o := range soakWorkload {
		kind, name, _ := strings.Cut(o, "/")
		_, _, err := f.readState(ctx, kind, name)
		if err != nil {
			s.note(&s.stateBad, "%s/%s: %v", f.ns, o, err)
			continue
		}
		if why := f.recordDisagrees(ctx, kind, name); why != "" {
			s.note(&s.disagree, "%s/%s: %s", f.ns, o, why)
		}
	}
}

// copies are deep copies of objs, to create afresh after a failed try.
func copies(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}
