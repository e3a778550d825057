package jobs

// Readers of a workload object's Jobs as a history: their operation and
// attempt, the order they finished in, which to bookkeep, which to prune,
// and what the decision table knows of each.

import (
	"sort"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
)

// Op is the operation label of a Job.
func Op(j *batchv1.Job) decide.Operation {
	return decide.Operation(j.Labels[infrav1.OperationLabel])
}

// Attempt is the attempt label of a Job (0 when unreadable).
func Attempt(j *batchv1.Job) int {
	n, _ := strconv.Atoi(j.Labels[infrav1.AttemptLabel])
	return n
}

// FinishedBefore orders finished Jobs by when they finished. Conditions
// carry seconds, so ties go to the lower attempt of the same operation,
// then the older creation, then the name: an order every pass agrees on.
func FinishedBefore(a, b *batchv1.Job) bool {
	_, _, ta, _ := Finished(a)
	_, _, tb, _ := Finished(b)
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if Op(a) == Op(b) && Attempt(a) != Attempt(b) {
		return Attempt(a) < Attempt(b)
	}
	if ca, cb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; !ca.Equal(cb) {
		return ca.Before(cb)
	}
	return a.Name < b.Name
}

// ToBookkeep returns the finished Jobs not bookkept yet, oldest-finished
// first. The cache lists them in no useful order, and after a manager
// outage several wait: read newest first, an older apply's success would
// take the applied record and the state's inputs hash back to its inputs,
// and an older failure would mark again what a newer apply settled.
func ToBookkeep(all []batchv1.Job) []*batchv1.Job {
	var out []*batchv1.Job
	for i := range all {
		j := &all[i]
		if finished, _, _, _ := Finished(j); finished && j.Annotations[infrav1.BookkeptAnnotation] != "true" {
			out = append(out, j)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return FinishedBefore(out[a], out[b]) })
	return out
}

// AppliesAfter names the apply Jobs of all that finished after j (only
// the successful ones when succeeded): what a late read of j's outcome
// must not undo. Bookkept or not, they are the newer truth.
func AppliesAfter(all []batchv1.Job, j *batchv1.Job, succeeded bool) []string {
	var out []string
	for i := range all {
		o := &all[i]
		finished, ok, _, _ := Finished(o)
		if o.Name == j.Name || !finished || Op(o) != decide.OpApply || (succeeded && !ok) {
			continue
		}
		if FinishedBefore(j, o) {
			out = append(out, o.Name)
		}
	}
	return out
}

// Summary is what the decision table knows of a finished Job. The
// bookkeeping annotations say how a failure counts.
func Summary(j *batchv1.Job) (decide.FinishedJob, bool) {
	finished, succeeded, at, _ := Finished(j)
	if !finished {
		return decide.FinishedJob{}, false
	}
	a := j.Annotations
	return decide.FinishedJob{
		Name: j.Name, Op: Op(j), Succeeded: succeeded, FinishedAt: at,
		InputsHash:     a[infrav1.InputsHashAnnotation],
		Blocked:        a[infrav1.DestructivePlanBlockedAnnotation] == "true",
		PlanChanged:    a[infrav1.PlanChangedAnnotation] == "true",
		Interrupted:    a[infrav1.InterruptedAnnotation] == "true",
		Remediation:    a[infrav1.DriftRemediationAnnotation] == "true",
		Rescued:        a[infrav1.RescuedSerialAnnotation] != "",
		PlanHash:       a[infrav1.PlanHashAnnotation],
		PlanUnreadable: a[infrav1.PlanUnreadableAnnotation] == "true",
	}, true
}

// NextAttempt is one more than the newest retained Job of op.
func NextAttempt(all []batchv1.Job, op decide.Operation) int {
	n := 0
	for i := range all {
		if Op(&all[i]) == op {
			n = max(n, Attempt(&all[i]))
		}
	}
	return n + 1
}

// Prunable returns the finished Jobs to delete: per operation, oldest
// first, the successes beyond keepSucceeded and the failures beyond
// keepFailed, always keeping the operation's newest success and its
// newest failure while no newer success exists. Running Jobs and Jobs
// not bookkept yet are never pruned.
func Prunable(all []batchv1.Job, keepSucceeded, keepFailed int) []*batchv1.Job {
	byOp := map[decide.Operation][]*batchv1.Job{}
	for i := range all {
		j := &all[i]
		if finished, _, _, _ := Finished(j); finished && j.Annotations[infrav1.BookkeptAnnotation] == "true" {
			byOp[Op(j)] = append(byOp[Op(j)], j)
		}
	}
	var out []*batchv1.Job
	for _, list := range byOp {
		sort.SliceStable(list, func(a, b int) bool {
			_, _, ta, _ := Finished(list[a])
			_, _, tb, _ := Finished(list[b])
			return ta.After(tb)
		})
		succeeded, failed, seenSuccess := 0, 0, false
		for i, j := range list {
			// A plan Job that succeeded without a readable plan is kept as
			// a failure: its backoff counts it.
			_, ok, _, _ := Finished(j)
			if ok && j.Annotations[infrav1.PlanUnreadableAnnotation] != "true" {
				succeeded++
				if succeeded > max(keepSucceeded, 1) {
					out = append(out, list[i])
				}
				seenSuccess = true
				continue
			}
			failed++
			if failed > max(keepFailed, 1) || (seenSuccess && failed > keepFailed) {
				out = append(out, list[i])
			}
		}
	}
	return out
}

// ObjectNamespace is the namespace of the object job runs for: its
// captf.io/owner-namespace label when it runs elsewhere (an evacuated
// destroy), else its own.
func ObjectNamespace(job metav1.Object) string {
	if ns := job.GetLabels()[infrav1.OwnerNamespaceLabel]; ns != "" {
		return ns
	}
	return job.GetNamespace()
}

// RescuedSerial is the state backup serial the newest finished apply of
// all rescued ("" when it rescued none).
func RescuedSerial(all []batchv1.Job) string {
	var newest *batchv1.Job
	var newestAt time.Time
	for i := range all {
		if fj, ok := Summary(&all[i]); ok && fj.Op == decide.OpApply && (newest == nil || fj.FinishedAt.After(newestAt)) {
			newest, newestAt = &all[i], fj.FinishedAt
		}
	}
	if newest == nil {
		return ""
	}
	return newest.Annotations[infrav1.RescuedSerialAnnotation]
}

// NewestFinished names the Job of all that finished last ("" when none);
// of two that finished at once, the greater name.
func NewestFinished(all []batchv1.Job) string {
	name, newest := "", time.Time{}
	for i := range all {
		j := &all[i]
		if done, _, at, _ := Finished(j); done && (name == "" || at.After(newest) || (at.Equal(newest) && j.Name > name)) {
			name, newest = j.Name, at
		}
	}
	return name
}
