package e2e

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// seenJob is what a jobWatch saw of one Job.
type seenJob struct {
	name, uid           string
	namespace           string
	ownerKind, owner    string // owner-kind and owner-name labels
	ownerUID            string // the owner reference's UID, or the owner-uid annotation
	op, attempt         string // op and attempt labels
	created             time.Time
	finished, succeeded bool // a Complete or Failed condition
	bookkept            bool // seen with the bookkept annotation
	gone                bool // deleted, or being deleted
}

func (j *seenJob) object() string { return j.ownerKind + "/" + j.owner }

// run names the object instance the Job ran for: two objects of one name
// made one after the other (in one namespace) are two instances.
func (j *seenJob) run() string { return j.namespace + "/" + j.object() + "@" + j.ownerUID }

// ended: the Job can no longer run anything the manager waits for.
func (j *seenJob) ended() bool { return j.finished || j.gone }

// jobWatch records every Job of a namespace, in the order the API server
// reports their changes (a watch, listing again when it ends), and notes
// each Job created while another Job of the same object had not finished:
// the manager starts an object's next Job only once it saw the last one
// finish, so the watch, which keeps the order of writes, sees the finish
// first.
type jobWatch struct {
	mu       sync.Mutex
	jobs     map[types.UID]*seenJob
	order    []*seenJob
	overlaps []string
	relists  int
	done     chan struct{}
}

// watchJobs watches the Jobs of ns until ctx ends.
func watchJobs(ctx context.Context, cs kubernetes.Interface, ns string) *jobWatch {
	w := &jobWatch{jobs: map[types.UID]*seenJob{}, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			w.watchOnce(ctx, cs.BatchV1().Jobs(ns))
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond): // the API server may be busy: do not spin
			}
		}
	}()
	return w
}

type jobsClient interface {
	List(ctx context.Context, opts metav1.ListOptions) (*batchv1.JobList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// watchOnce lists the Jobs, then watches from that list until the watch
// ends or fails.
func (w *jobWatch) watchOnce(ctx context.Context, jobs jobsClient) {
	list, err := jobs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	w.relist(list.Items)
	wi, err := jobs.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return
	}
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		j, ok := ev.Object.(*batchv1.Job)
		if !ok { // an error, such as a resource version too old
			return
		}
		w.see(j, ev.Type == watch.Deleted)
	}
}

// see records one state of a Job the watch reported.
func (w *jobWatch) see(j *batchv1.Job, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observe(j, deleted)
}

// relist takes a full list: changes to the Jobs known first, then the
// ones known that are gone, then the new ones, so that a Job that ended
// while the watch was down does not count as running when its successor
// appears.
func (w *jobWatch) relist(items []batchv1.Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.relists++
	listed := map[types.UID]bool{}
	for i := range items {
		listed[items[i].UID] = true
		if w.jobs[items[i].UID] != nil {
			w.observe(&items[i], false)
		}
	}
	for uid, j := range w.jobs {
		if !listed[uid] {
			j.gone = true
		}
	}
	for i := range items {
		if w.jobs[items[i].UID] == nil {
			w.observe(&items[i], false)
		}
	}
}

// observe records one state of a Job; w.mu is held.
func (w *jobWatch) observe(j *batchv1.Job, deleted bool) {
	s := w.jobs[j.UID]
	if s == nil {
		s = &seenJob{name: j.Name, uid: string(j.UID), namespace: j.Namespace, ownerUID: j.Annotations[infrav1.OwnerUIDAnnotation],
			ownerKind: j.Labels[infrav1.OwnerKindLabel], owner: j.Labels[infrav1.OwnerNameLabel],
			op: j.Labels[infrav1.OperationLabel], attempt: j.Labels[infrav1.AttemptLabel], created: j.CreationTimestamp.Time}
		for _, ref := range j.OwnerReferences {
			s.ownerUID = string(ref.UID)
		}
		w.jobs[j.UID] = s
		w.order = append(w.order, s)
		w.update(s, j, deleted)
		if !s.ended() {
			for _, o := range w.order {
				if o != s && o.run() == s.run() && !o.ended() {
					w.overlaps = append(w.overlaps, fmt.Sprintf("%s created while %s of %s had not finished", s.name, o.name, s.object()))
				}
			}
		}
		return
	}
	w.update(s, j, deleted)
}

func (w *jobWatch) update(s *seenJob, j *batchv1.Job, deleted bool) {
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			s.finished, s.succeeded = true, c.Type == batchv1.JobComplete
		}
	}
	s.gone = s.gone || deleted || j.DeletionTimestamp != nil
	s.bookkept = s.bookkept || j.Annotations[infrav1.BookkeptAnnotation] == "true"
}

// snapshot copies what the watch saw so far, oldest Job first.
func (w *jobWatch) snapshot() []seenJob {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]seenJob, 0, len(w.order))
	for _, j := range w.order {
		out = append(out, *j)
	}
	return out
}

// duplicates are the (object, op, attempt) that more than one Job ran.
func duplicates(jobs []seenJob) []string {
	byAttempt := map[string][]string{}
	for _, j := range jobs {
		k := fmt.Sprintf("%s %s a%s", j.run(), j.op, j.attempt)
		byAttempt[k] = append(byAttempt[k], j.name+" ("+j.uid+")")
	}
	var out []string
	for k, names := range byAttempt {
		if len(names) > 1 {
			out = append(out, fmt.Sprintf("%s: %v", k, names))
		}
	}
	sort.Strings(out)
	return out
}

// count counts the Jobs of an object and operation, and the successful ones.
func count(jobs []seenJob, object, op string) (all, succeeded int) {
	for _, j := range jobs {
		if j.object() == object && j.op == op {
			all++
			if j.succeeded {
				succeeded++
			}
		}
	}
	return all, succeeded
}

// The watch's own figures, on made-up Job changes: a duplicate attempt and
// a Job created before the last one finished are counted; a Job created
// after the last one finished, or after it was listed gone, is not.
func TestJobWatchFigures(t *testing.T) {
	job := func(uid, name, owner, op, attempt string, finished bool) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: name, Labels: map[string]string{
			infrav1.OwnerKindLabel: "TerraformMachine", infrav1.OwnerNameLabel: owner,
			infrav1.OperationLabel: op, infrav1.AttemptLabel: attempt}}}
		if finished {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		}
		return j
	}
	testCases := []struct {
		name                         string
		changes                      func(w *jobWatch)
		wantDuplicates, wantOverlaps int
	}{
		{"one after the other", func(w *jobWatch) {
			w.see(job("1", "apply-a1", "m", "apply", "1", false), false)
			w.see(job("1", "apply-a1", "m", "apply", "1", true), false)
			w.see(job("2", "destroy-a1", "m", "destroy", "1", false), false)
		}, 0, 0},
		{"two objects at once", func(w *jobWatch) {
			w.see(job("1", "apply-a1", "m", "apply", "1", false), false)
			w.see(job("2", "apply-a1-other", "n", "apply", "1", false), false)
		}, 0, 0},
		{"a second Job of the attempt while the first runs", func(w *jobWatch) {
			w.see(job("1", "apply-a1-aaaaaa", "m", "apply", "1", false), false)
			w.see(job("2", "apply-a1-bbbbbb", "m", "apply", "1", false), false)
		}, 1, 1},
		{"the next attempt before the last finished", func(w *jobWatch) {
			w.see(job("1", "apply-a1", "m", "apply", "1", false), false)
			w.see(job("2", "apply-a2", "m", "apply", "2", false), false)
		}, 0, 1},
		{"an object of the same name made again, its last Job left running", func(w *jobWatch) {
			w.see(job("1", "apply-a1", "m", "apply", "1", false), false)
			again := job("2", "apply-a1", "m", "apply", "1", false)
			again.Annotations = map[string]string{infrav1.OwnerUIDAnnotation: "second-m"}
			w.see(again, false)
		}, 0, 0},
		{"same object name in two namespaces", func(w *jobWatch) {
			w.see(job("1", "apply-a1", "m", "apply", "1", false), false)
			other := job("2", "apply-a1", "m", "apply", "1", false)
			other.Namespace = "other"
			w.see(other, false)
		}, 0, 0},
		{"relisted: the last one gone, the next one new", func(w *jobWatch) {
			w.see(job("1", "apply-a1", "m", "apply", "1", false), false)
			w.relist([]batchv1.Job{*job("2", "destroy-a1", "m", "destroy", "1", false)})
		}, 0, 0},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			w := &jobWatch{jobs: map[types.UID]*seenJob{}}
			tc.changes(w)
			if got := duplicates(w.snapshot()); len(got) != tc.wantDuplicates {
				t.Errorf("duplicates %v, want %d", got, tc.wantDuplicates)
			}
			if len(w.overlaps) != tc.wantOverlaps {
				t.Errorf("overlaps %v, want %d", w.overlaps, tc.wantOverlaps)
			}
		})
	}
}
