package lifecycle_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// gate is a named pipe a module writes a file into: the write blocks until
// the test opens the pipe, so an apply reaching it keeps running, even
// after SIGTERM (OpenTofu waits for the resource being created), until the
// test lets it finish.
type gate struct {
	t    *testing.T
	path string
	once sync.Once
}

func (w *world) newGate() *gate {
	w.t.Helper()
	g := &gate{t: w.t, path: filepath.Join(w.t.TempDir(), "gate")}
	if err := syscall.Mkfifo(g.path, 0o600); err != nil {
		w.t.Fatal(err)
	}
	// A writer still blocked when the test ends is let go.
	w.t.Cleanup(func() { g.open() })
	return g
}

// open lets the blocked write finish, then removes the pipe, so that a
// later run writes a plain file there.
func (g *gate) open() {
	g.once.Do(func() {
		f, err := os.OpenFile(g.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			g.t.Errorf("opening the gate: %v", err)
			return
		}
		// A writer blocked in its open is past it now; the read ends when
		// it closed the file (at once when there is none).
		_, _ = io.Copy(io.Discard, f)
		_ = f.Close()
		if err := os.Remove(g.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			g.t.Errorf("removing the gate: %v", err)
		}
	})
}

// gatedClusterModule is the noop cluster module whose apply ends by
// writing a file into the gate, and which takes a variable the test
// changes to make an apply due.
func gatedClusterModule(t *testing.T, g *gate) string {
	return moduleFrom(t, "noop-cluster", func(files map[string]string) {
		files["gate.tf"] = `variable "greeting" {
  type    = string
  default = "hello"
}

resource "local_file" "gate" {
  depends_on = [terraform_data.load_balancer]
  filename   = "` + g.path + `"
  content    = "open"
}
`
	})
}

// recording is every change a watch of one kind of object in the world's
// namespace delivered, in the order of the watch.
type recording struct {
	mu     sync.Mutex
	events []watch.Event
	ended  bool
}

// record watches list's kind in the namespace until the test ends.
func (w *world) record(list client.ObjectList) *recording {
	w.t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		w.t.Fatal(err)
	}
	wt, err := c.Watch(w.t.Context(), list, client.InNamespace(w.ns))
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(wt.Stop)
	r := &recording{}
	go func() {
		for ev := range wt.ResultChan() {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		}
		r.mu.Lock()
		r.ended = true
		r.mu.Unlock()
	}()
	return r
}

// changes returns what was recorded so far; a watch that ended or failed
// early fails the test, since the recording would miss changes.
func (r *recording) changes(t *testing.T) []watch.Event {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.events {
		if ev.Type == watch.Error {
			t.Fatalf("the watch failed: %v", ev.Object)
		}
	}
	if r.ended {
		t.Fatal("the watch ended before the test")
	}
	return slices.Clone(r.events)
}

// runWaitingAt waits for a running pod of op in the namespace whose log
// shows line, and returns its run.
func (w *world) runWaitingAt(k *kubelet.Kubelet, op, line string) kubelet.Run {
	w.t.Helper()
	var run kubelet.Run
	w.eventually(2*time.Minute, "a "+op+" pod at "+line, func() (bool, error) {
		for _, r := range k.Runs() {
			if r.Namespace != w.ns || r.Op != op || r.ExitCode != -1 {
				continue
			}
			if log, _ := k.Logs(w.ns, r.Pod, jobs.SourceContainer); strings.Contains(string(log), line) {
				run = r
				return true, nil
			}
		}
		return false, nil
	})
	return run
}

// destroyed: a destroy Job of the object (kind, name) of the world's
// namespace ran on k and succeeded.
func (w *world) destroyed(k *kubelet.Kubelet, kind, name string) bool {
	prefix := "captf-" + state.KindShort(kind) + "-" + name + "-destroy-"
	for _, r := range k.Runs() {
		if r.Namespace == w.ns && r.Op == "destroy" && r.ExitCode == 0 && strings.HasPrefix(r.Job, prefix) {
			return true
		}
	}
	return false
}

// runOf returns the kubelet's run of pod.
func runOf(k *kubelet.Kubelet, pod string) kubelet.Run {
	for _, r := range k.Runs() {
		if r.Pod == pod {
			return r
		}
	}
	return kubelet.Run{}
}

// runLeases lists the object's run Leases.
func (w *world) runLeases(kind, name string) []coordinationv1.Lease {
	w.t.Helper()
	var list coordinationv1.LeaseList
	if err := env.Client.List(w.t.Context(), &list, client.InNamespace(w.ns), client.MatchingLabels{
		infrav1.LeaseLabel: "run", infrav1.OwnerKindLabel: kind, infrav1.OwnerNameLabel: name,
	}); err != nil {
		w.t.Fatal(err)
	}
	return list.Items
}

// attemptRecord reads the object's attempt record (nil when none).
func (w *world) attemptRecord(kind, name string) *records.Record {
	w.t.Helper()
	attempt, _, err := records.Load(w.t.Context(), env.Client, w.ns, kind, name)
	if err != nil {
		w.t.Fatal(err)
	}
	return attempt
}

// TestForegroundDeletedJobStaysActive: a user deletes a running apply Job
// with foreground propagation, so the Job lingers (deletionTimestamp,
// foregroundDeletion finalizer) while its pod stops. Until it is gone the
// object keeps naming it in status.activeJob and reports it applying,
// starts no other Job although new inputs are due, and leaves it the run
// lease while its pod runs. Once it is gone, nobody knows what it applied:
// the attempt record names it as an unconfirmed apply, a JobInterrupted
// warning says it vanished, and an apply of the current inputs runs after
// it (captf.io/after-interrupted-apply).
func TestForegroundDeletedJobStaysActive(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	g := w.newGate()
	images := kubelet.ExampleImages(t)
	images["local/gated-cluster:tofu"] = kubelet.Image{ModuleDir: gatedClusterModule(t, g), Runtime: "tofu"}
	k := kubelet.StartIn(t, env, w.ns, images)
	w.checkStatuses()
	jobChanges := w.record(&batchv1.JobList{})
	secretChanges := w.record(&corev1.SecretList{})
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.Source.Image = "local/gated-cluster:tofu" })

	// The apply is under way: its last resource waits at the gate.
	victim := w.runWaitingAt(k, "apply", "local_file.gate: Creating...")
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: victim.Job}}
	w.get(job)
	if err := env.Client.Delete(t.Context(), job, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	// The garbage collector deletes the pod first; the runner got SIGTERM
	// and the runtime waits for the resource at the gate.
	w.eventually(time.Minute, "the runtime interrupted", func() (bool, error) {
		log, _ := k.Logs(w.ns, victim.Pod, jobs.SourceContainer)
		return strings.Contains(string(log), "Interrupt received"), nil
	})
	w.get(job)
	if job.DeletionTimestamp == nil || !slices.Contains(job.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Fatalf("Job %s: deletionTimestamp %v, finalizers %v; want it being deleted in the foreground", job.Name, job.DeletionTimestamp, job.Finalizers)
	}

	// New inputs make an apply due; a pass that saw them (observedGeneration)
	// still finds the Job running.
	w.update(tc, func(o client.Object) {
		o.(*infrav1.TerraformCluster).Spec.Variables = &apiextensionsv1.JSON{Raw: []byte(`{"greeting":"changed"}`)}
	})
	w.eventually(time.Minute, "a pass of the new generation", func() (bool, error) {
		w.get(tc)
		return tc.Status.ObservedGeneration == tc.Generation, nil
	})
	if r := runOf(k, victim.Pod); r.ExitCode != -1 {
		t.Fatalf("pod %s ended (exit %d) before the checks; the gate did not hold it", victim.Pod, r.ExitCode)
	}
	w.get(job)
	if aj := tc.Status.ActiveJob; aj == nil || aj.Name != job.Name {
		t.Errorf("status.activeJob = %+v while Job %s is being deleted and its pod runs, want it named", aj, job.Name)
	}
	if c := conditionOf(tc, infrav1.InputsAppliedCondition); c == nil || c.Reason != infrav1.ApplyRunningReason || !strings.Contains(c.Message, job.Name) {
		t.Errorf("InputsApplied = %+v while Job %s is being deleted, want ApplyRunning naming it", c, job.Name)
	}
	if c := conditionOf(tc, infrav1.ApplyJobSucceededCondition); c != nil && strings.Contains(c.Message, "vanished") {
		t.Errorf("ApplyJobSucceeded = %+v while Job %s still exists", c, job.Name)
	}
	if all := w.jobsOf(state.KindCluster, tc.Name, ""); len(all) != 1 || all[0].UID != job.UID {
		t.Errorf("%d Jobs while Job %s is being deleted, want only it", len(all), job.Name)
	}
	leases := w.runLeases(state.KindCluster, tc.Name)
	if len(leases) != 1 || ptr.Deref(leases[0].Spec.HolderIdentity, "") != job.Name {
		t.Errorf("run leases %v while the pod of Job %s runs, want one held by it", leaseHolders(leases), job.Name)
	}

	// The apply finishes its resource and stops; the Job goes with its pod.
	g.open()
	w.eventually(2*time.Minute, "Job "+job.Name+" gone", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(job), &batchv1.Job{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if r := runOf(k, victim.Pod); r.Result.Error == nil || r.Result.Error.Kind != infrav1.RunErrorInterrupted {
		t.Errorf("the deleted Job's runner reported %+v, want an interrupted apply", r.Result.Error)
	}

	var after batchv1.Job
	w.eventually(3*time.Minute, "an apply after the interrupted one succeeded", func() (bool, error) {
		for _, j := range w.jobsOf(state.KindCluster, tc.Name, "apply") {
			if j.UID != job.UID && j.Annotations[infrav1.AfterInterruptedApplyAnnotation] == job.Name && j.Status.Succeeded > 0 {
				after = j
				return true, nil
			}
		}
		return false, nil
	})
	w.eventually(time.Minute, "the current inputs applied", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.InputsAppliedCondition)
		return provisioned(tc) && c != nil && c.Status == metav1.ConditionTrue, nil
	})

	// No other Job of the object was created before the deleted one was
	// gone (one watch delivers the Jobs' changes in order).
	gone := false
	for _, ev := range jobChanges.changes(t) {
		j, ok := ev.Object.(*batchv1.Job)
		if !ok || j.Labels[infrav1.OwnerNameLabel] != tc.Name {
			continue
		}
		switch {
		case j.UID == job.UID && ev.Type == watch.Deleted:
			gone = true
		case j.UID != job.UID && ev.Type == watch.Added && !gone:
			t.Errorf("Job %s (%s) was created while Job %s was still being deleted", j.Name, j.Labels[infrav1.OperationLabel], job.Name)
		}
	}
	if !gone {
		t.Errorf("the watch never saw Job %s deleted", job.Name)
	}
	// The attempt record named the deleted Job as unconfirmed until the
	// apply after it succeeded.
	attemptName := records.AttemptName(state.KindCluster, tc.Name)
	named := false
	for _, ev := range secretChanges.changes(t) {
		if s, ok := ev.Object.(*corev1.Secret); ok && s.Name == attemptName {
			named = named || s.Annotations[infrav1.UnconfirmedApplyAnnotation] == job.Name
		}
	}
	if !named {
		t.Errorf("the attempt record %s never carried %s=%s", attemptName, infrav1.UnconfirmedApplyAnnotation, job.Name)
	}
	if a := w.attemptRecord(state.KindCluster, tc.Name); a == nil || a.UnconfirmedApply != "" {
		t.Errorf("attempt record %+v after Job %s succeeded, want no unconfirmed apply", a, after.Name)
	}
	w.eventually(30*time.Second, "a JobInterrupted warning naming "+job.Name, func() (bool, error) {
		return slices.ContainsFunc(w.eventWarnings(tc.Name), func(e [2]string) bool {
			return e[0] == "JobInterrupted" && strings.Contains(e[1], job.Name) && strings.Contains(e[1], "vanished")
		}), nil
	})
}

func leaseHolders(leases []coordinationv1.Lease) []string {
	var out []string
	for _, l := range leases {
		out = append(out, l.Name+"="+ptr.Deref(l.Spec.HolderIdentity, ""))
	}
	return out
}

// TestOwnDeletionIsNoVanishedJob: the manager deletes a Job itself — a
// drift Job whose pinned image digest is gone from the registry, given up
// on after the pull grace (ImagePullFallback) and run again with the
// recorded tag. The object never reports that Job as vanished: no
// JobInterrupted warning, no condition saying a Job vanished, and no
// unconfirmed apply on its attempt record.
func TestOwnDeletionIsNoVanishedJob(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	if tc.Status.Source == nil || !strings.Contains(tc.Status.Source.ImageDigest, "@sha256:") {
		t.Fatalf("status.source = %+v, want the digest the apply pinned", tc.Status.Source)
	}

	// The registry lost the pinned digest.
	applied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: records.AppliedName(state.KindCluster, tc.Name)}}
	w.update(applied, func(o client.Object) {
		o.GetAnnotations()[infrav1.ImageDigestAnnotation] = "local/noop-cluster@sha256:" + strings.Repeat("0", 64)
	})
	versions := w.record(&infrav1.TerraformClusterList{})
	w.update(tc, func(o client.Object) {
		o.(*infrav1.TerraformCluster).Spec.Drift = &infrav1.ClusterDriftSpec{IntervalSeconds: ptr.To[int32](5), Action: infrav1.DriftActionReport}
	})

	var deleted string
	w.eventually(imagePullGrace+2*time.Minute, "the drift Job given up on (ImagePullFallback)", func() (bool, error) {
		for _, e := range w.eventWarnings(tc.Name) {
			if _, rest, ok := strings.Cut(e[1], "deleted drift Job "); ok && e[0] == "ImagePullFallback" {
				deleted, _, _ = strings.Cut(rest, ";")
				return true, nil
			}
		}
		return false, nil
	})
	w.eventually(2*time.Minute, "the drift with the tag checked", func() (bool, error) {
		w.get(tc)
		return tc.Status.LastDriftCheck != nil && w.succeeded(state.KindCluster, tc.Name, "drift") > 0, nil
	})
	// Drift checks stop; a pass of that generation ran after the fallback
	// drift was bookkept.
	w.update(tc, func(o client.Object) { o.(*infrav1.TerraformCluster).Spec.Drift.IntervalSeconds = ptr.To[int32](0) })
	w.eventually(time.Minute, "a pass of the new generation", func() (bool, error) {
		w.get(tc)
		return tc.Status.ObservedGeneration == tc.Generation, nil
	})

	for _, e := range w.eventWarnings(tc.Name) {
		if e[0] == "JobInterrupted" {
			t.Errorf("JobInterrupted after the manager deleted drift Job %s itself: %s", deleted, e[1])
		}
	}
	for _, ev := range versions.changes(t) {
		o, ok := ev.Object.(*infrav1.TerraformCluster)
		if !ok {
			continue
		}
		for _, c := range o.Status.Conditions {
			if strings.Contains(c.Message, "vanished") {
				t.Errorf("status (resourceVersion %s) after the manager deleted drift Job %s itself: %s=%s/%s %q",
					o.ResourceVersion, deleted, c.Type, c.Status, c.Reason, c.Message)
			}
		}
	}
	a := w.attemptRecord(state.KindCluster, tc.Name)
	if a == nil {
		t.Fatal("the cluster has no attempt record")
	}
	if a.UnconfirmedApply != "" || a.MayHaveApplied {
		t.Errorf("attempt record: unconfirmed apply %q, may have applied %v; the manager's own deletion of %s made the apply doubtful", a.UnconfirmedApply, a.MayHaveApplied, deleted)
	}
	if !slices.Contains(a.UnpullableImages, "local/noop-cluster@sha256:"+strings.Repeat("0", 64)) {
		t.Errorf("attempt record lists unpullable images %v, want the lost digest", a.UnpullableImages)
	}
}
