//go:build captfsoak

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/crashpoint"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/records"
	"captf.io/captf/pkg/state"
)

// envDuration reads a duration from the environment variable name.
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 10m", name, v)
	}
	return d
}

// waitUntil polls done every 500ms until it is true or timeout passes.
func waitUntil(ctx context.Context, timeout time.Duration, done func() bool) error {
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return done(), nil
	})
}

// killer runs `captf-dev manager` and, until stopped, kills it with
// SIGKILL after a random 1 to 6 seconds of life, or sees it kill itself
// at a crash point, and starts it again.
type killer struct {
	t    *testing.T
	e    *processEnv
	env  []string
	stop func() kills
	runs int
}

// kills are what the killer did and saw.
type kills struct {
	signalled int            // SIGKILLs the soak sent
	points    map[string]int // kills at each crash point
	starts    int            // manager processes started
	failed    []string       // starts that exited before ready with no crash point
}

func (k kills) total() int {
	n := k.signalled
	for _, c := range k.points {
		n += c
	}
	return n
}

// superviseManager starts the killer; probability ("" for 0.05) is the
// chance each crash point kills the manager.
func superviseManager(t *testing.T, e *processEnv, probability string) *killer {
	if probability == "" {
		probability = "0.05"
	}
	k := &killer{t: t, e: e, env: append(slices.Clone(e.env), crashpoint.EnvProbability+"="+probability)}
	stop := make(chan struct{})
	done := make(chan kills)
	go k.loop(stop, done)
	k.stop = func() kills { close(stop); return <-done }
	return k
}

func (k *killer) loop(stop <-chan struct{}, done chan<- kills) {
	got := kills{points: map[string]int{}}
	defer func() { done <- got }()
	for {
		k.runs++
		got.starts++
		p := startDev(k.t, fmt.Sprintf("manager-%03d", k.runs), k.e.bin, k.e.root, k.e.dir, k.env, "manager")
		life := time.NewTimer(time.Second + rand.N(5*time.Second))
		select {
		case <-p.exited:
			if point := crashPointOf(p.stderr); point != "" {
				got.points[point]++
			} else {
				got.failed = append(got.failed, fmt.Sprintf("%s exited (%v) with no crash point\n%s", p.name, p.err, p.transcript()))
			}
		case <-life.C:
			if syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL) == nil {
				<-p.exited
				if point := crashPointOf(p.stderr); point != "" { // it got there first
					got.points[point]++
				} else {
					got.signalled++
				}
			}
		case <-stop:
			life.Stop()
			p.killGroup()
			return
		}
		life.Stop()
		select {
		case <-stop:
			return
		default:
		}
	}
}

// crashPointOf names the crash point a manager's stderr ends at, if any.
func crashPointOf(stderr string) string {
	data, _ := os.ReadFile(stderr)
	for _, line := range strings.Split(string(data), "\n") {
		if point, ok := strings.CutPrefix(line, "crash point "); ok {
			return point
		}
	}
	return ""
}

// podWatch notes each pod that starts running while another pod of the
// same object (namespace, kind, name) runs, and the Jobs whose pods ran.
type podWatch struct {
	mu       sync.Mutex
	running  map[string]map[string]bool // object -> running pod names
	ran      map[string]bool            // UIDs of the Jobs a pod of which ran
	overlaps []string
	done     chan struct{}
}

func watchPods(ctx context.Context, cs kubernetes.Interface) *podWatch {
	w := &podWatch{running: map[string]map[string]bool{}, ran: map[string]bool{}, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			w.watchOnce(ctx, cs)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *podWatch) watchOnce(ctx context.Context, cs kubernetes.Interface) {
	pods := cs.CoreV1().Pods(metav1.NamespaceAll)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: infrav1.OperationLabel})
	if err != nil {
		return
	}
	w.mu.Lock()
	listed := map[string]bool{}
	for i := range list.Items {
		listed[list.Items[i].Namespace+"/"+list.Items[i].Name] = true
	}
	for _, names := range w.running {
		for name := range names {
			if !listed[name] {
				delete(names, name)
			}
		}
	}
	for i := range list.Items {
		w.see(&list.Items[i], false)
	}
	w.mu.Unlock()
	wi, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: infrav1.OperationLabel, ResourceVersion: list.ResourceVersion})
	if err != nil {
		return
	}
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return
		}
		w.mu.Lock()
		w.see(pod, ev.Type == watch.Deleted)
		w.mu.Unlock()
	}
}

// see records one state of a pod; w.mu is held.
func (w *podWatch) see(pod *corev1.Pod, deleted bool) {
	object := pod.Namespace + "/" + pod.Labels[infrav1.OwnerKindLabel] + "/" + pod.Labels[infrav1.OwnerNameLabel]
	name := pod.Namespace + "/" + pod.Name
	if w.running[object] == nil {
		w.running[object] = map[string]bool{}
	}
	names := w.running[object]
	if pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		for _, ref := range pod.OwnerReferences {
			w.ran[string(ref.UID)] = true
		}
	}
	if deleted || pod.Status.Phase != corev1.PodRunning {
		delete(names, name)
		return
	}
	if !names[name] {
		for other := range names {
			w.overlaps = append(w.overlaps, fmt.Sprintf("%s runs while %s of %s runs", name, other, object))
		}
		names[name] = true
	}
}

// recordDisagrees says how the object's applied record disagrees with its
// state ("" when it agrees): the state's inputs hash is the applied
// record's, and a destroy now would render that record.
func (f *flow) recordDisagrees(ctx context.Context, kind, name string) string {
	attempt, applied, err := records.Load(ctx, f.env.Client, f.ns, kind, name)
	if err != nil {
		return err.Error()
	}
	if applied == nil {
		return "no applied record"
	}
	var base corev1.Secret
	if _, err := f.get(ctx, state.SecretName(f.suffix(kind, name)), &base); err != nil {
		return err.Error()
	}
	hash := base.Annotations[infrav1.InputsHashAnnotation]
	if applied.InputsHash != hash {
		return fmt.Sprintf("applied record of Job %s has inputs hash %s, the state %q", applied.Job, applied.InputsHash, hash)
	}
	if rec, mismatch := records.ForDestroy(attempt, applied, hash); rec == nil || mismatch || rec.Job != applied.Job {
		return fmt.Sprintf("a destroy would render the record of Job %v, not the applied one of Job %s", rec, applied.Job)
	}
	return ""
}

// report prints the soak's figures and fails on any that is not 0.
func (s *soak) report(t *testing.T, ctx context.Context, env *devenv.Env, k kills, pods *podWatch) {
	seen := s.jobs.snapshot()
	var soakJobs []seenJob
	for _, j := range seen {
		if strings.HasPrefix(j.namespace, "soak-") {
			soakJobs = append(soakJobs, j)
		}
	}
	// A Job whose pod never ran (its manager was killed between the Job
	// and its per-run Secret; it is deleted as stuck after a minute and
	// the attempt started again) ran nothing: only Jobs that ran count.
	var ran []seenJob
	neverRan := 0
	for _, j := range soakJobs {
		if pods.ran[j.uid] {
			ran = append(ran, j)
		} else if j.gone && !j.finished {
			neverRan++
		}
	}
	dups := duplicates(ran)
	var neverBooked, noDestroy []string
	destroyed := map[string]bool{}
	for _, j := range soakJobs {
		if j.op == string(infrav1.OperationDestroy) && j.succeeded {
			destroyed[j.run()] = true
		}
	}
	applied := map[string]bool{}
	for _, j := range soakJobs {
		if j.finished && !j.bookkept && j.op != string(infrav1.OperationDestroy) {
			neverBooked = append(neverBooked, j.name+" of "+j.run())
		}
		if j.op == string(infrav1.OperationApply) && j.succeeded && !applied[j.run()] {
			applied[j.run()] = true
			if !destroyed[j.run()] {
				noDestroy = append(noDestroy, j.run())
			}
		}
	}
	lockEvents := s.lockEvents(t, ctx, env)
	left := s.left(t, ctx, env)
	overlaps := slices.Concat(s.jobs.overlaps, pods.overlaps)
	points := make([]string, 0, len(k.points))
	for _, p := range crashpoint.Points {
		points = append(points, fmt.Sprintf("%s %d", p, k.points[p]))
	}
	t.Logf("figures: %d rounds, %d Jobs, %d manager starts", s.rounds, len(soakJobs), k.starts)
	t.Logf("figures: kills survived %d (%d SIGKILLs sent, %d at crash points: %s)", k.total(), k.signalled, k.total()-k.signalled, strings.Join(points, ", "))
	t.Logf("figures: duplicate Jobs per attempt %d (%d Jobs deleted before any pod ran)", len(dups), neverRan)
	t.Logf("figures: two Jobs or pods of one object alive at once %d (%d Jobs, %d pods)", len(overlaps), len(s.jobs.overlaps), len(pods.overlaps))
	t.Logf("figures: runs failed on the state lock %d", len(s.lockFails)+len(lockEvents))
	t.Logf("figures: finished Jobs never bookkept %d (%d at checkpoints)", len(neverBooked), len(s.unbooked))
	t.Logf("figures: state Secrets lost or unreadable %d", len(s.stateBad))
	t.Logf("figures: applied records that disagree with the state %d", len(s.disagree))
	t.Logf("figures: objects applied and never destroyed %d", len(noDestroy))
	t.Logf("figures: objects left after teardown %d", len(left))
	t.Logf("figures: manager starts that failed with no crash point %d", len(k.failed))
	for _, l := range slices.Concat(dups, overlaps, s.lockFails, lockEvents, neverBooked, s.unbooked, s.stateBad, s.disagree, noDestroy, left, k.failed) {
		t.Error(l)
	}
	if k.total() < 100 && s.duration >= 10*time.Minute {
		t.Errorf("only %d kills in %s; the soak promises at least 100 in its default 10 minutes", k.total(), s.duration)
	}
}

// lockEvents are the JobFailed events of the soak's namespaces that name
// the state lock.
func (s *soak) lockEvents(t *testing.T, ctx context.Context, env *devenv.Env) []string {
	var events eventsv1.EventList
	if err := env.Client.List(ctx, &events); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range events.Items {
		if strings.HasPrefix(ev.Namespace, "soak-") && ev.Reason == "JobFailed" && strings.Contains(strings.ToLower(ev.Note), "lock") {
			out = append(out, fmt.Sprintf("%s/%s %s: %s", ev.Namespace, ev.Regarding.Name, ev.Reason, ev.Note))
		}
	}
	return out
}

// left lists what CAPTF made that is still in the soak's namespaces.
func (s *soak) left(t *testing.T, ctx context.Context, env *devenv.Env) []string {
	var out []string
	for w := range 2 {
		f := &flow{t: t, ns: fmt.Sprintf("soak-%d", w), env: env}
		if ok, why, err := f.nothingLeft(ctx); err != nil {
			t.Fatal(err)
		} else if !ok {
			out = append(out, f.ns+": "+why)
		}
		for _, list := range []client.ObjectList{&infrav1.TerraformClusterList{}, &infrav1.TerraformMachineList{}, &infrav1.TerraformMachinePoolList{}} {
			if err := env.Client.List(ctx, list, client.InNamespace(f.ns)); err != nil {
				t.Fatal(err)
			}
			if n := meta.LenList(list); n > 0 {
				out = append(out, fmt.Sprintf("%s: %d %T left", f.ns, n, list))
			}
		}
	}
	return out
}
