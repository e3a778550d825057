package workspace

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
)

// jobOp is the operation label of a Job.
func jobOp(j *batchv1.Job) decide.Operation {
	return decide.Operation(j.Labels[infrav1.OperationLabel])
}

// jobAttempt is the attempt label of a Job (0 when unreadable).
func jobAttempt(j *batchv1.Job) int {
	n, _ := strconv.Atoi(j.Labels[infrav1.AttemptLabel])
	return n
}

// finishedBefore orders finished Jobs by when they finished. Conditions
// carry seconds, so ties go to the lower attempt of the same operation,
// then the older creation, then the name: an order every pass agrees on.
func finishedBefore(a, b *batchv1.Job) bool {
	_, _, ta, _ := jobs.Finished(a)
	_, _, tb, _ := jobs.Finished(b)
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if jobOp(a) == jobOp(b) && jobAttempt(a) != jobAttempt(b) {
		return jobAttempt(a) < jobAttempt(b)
	}
	if ca, cb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; !ca.Equal(cb) {
		return ca.Before(cb)
	}
	return a.Name < b.Name
}

// toBookkeep returns the finished Jobs not bookkept yet, oldest-finished
// first. The cache lists them in no useful order, and after a manager
// outage several wait: read newest first, an older apply's success would
// take the applied record and the state's inputs hash back to its inputs,
// and an older failure would mark again what a newer apply settled.
func toBookkeep(all []batchv1.Job) []*batchv1.Job {
	var out []*batchv1.Job
	for i := range all {
		j := &all[i]
		if finished, _, _, _ := jobs.Finished(j); finished && j.Annotations[infrav1.BookkeptAnnotation] != "true" {
			out = append(out, j)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return finishedBefore(out[a], out[b]) })
	return out
}

// appliesAfter names the apply Jobs of all that finished after j (only
// the successful ones when succeeded): what a late read of j's outcome
// must not undo. Bookkept or not, they are the newer truth.
func appliesAfter(all []batchv1.Job, j *batchv1.Job, succeeded bool) []string {
	var out []string
	for i := range all {
		o := &all[i]
		finished, ok, _, _ := jobs.Finished(o)
		if o.Name == j.Name || !finished || jobOp(o) != decide.OpApply || (succeeded && !ok) {
			continue
		}
		if finishedBefore(j, o) {
			out = append(out, o.Name)
		}
	}
	return out
}

// finishedJob is what the decision table knows of a finished Job. The
// bookkeeping annotations say how a failure counts.
func finishedJob(j *batchv1.Job) (decide.FinishedJob, bool) {
	finished, succeeded, at, _ := jobs.Finished(j)
	if !finished {
		return decide.FinishedJob{}, false
	}
	a := j.Annotations
	return decide.FinishedJob{
		Name: j.Name, Op: jobOp(j), Succeeded: succeeded, FinishedAt: at,
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

// history is what the decision table knows of the object's finished Jobs.
func (p *pass) history() []decide.FinishedJob {
	var out []decide.FinishedJob
	for i := range p.jobs {
		if fj, ok := finishedJob(&p.jobs[i]); ok {
			fj.InputsHash = p.keyed(fj.InputsHash)
			fj.PlanEnded = fj.Blocked && p.blockEnded(fj)
			out = append(out, fj)
		}
	}
	return out
}

// blockEnded: the plan a blocked apply made is no longer live, or cannot
// be found a minute after the Job ended (pruned, deleted; a younger one
// may not be in the cache yet).
func (p *pass) blockEnded(fj decide.FinishedJob) bool {
	if fj.PlanHash == "" {
		return false // no plan to approve: retried after RetryMax
	}
	name := planName(p.obj.GetName(), fj.Name, fj.PlanHash)
	for i := range p.plans {
		if p.plans[i].Name == name {
			return !live(&p.plans[i])
		}
	}
	return p.now.Sub(fj.FinishedAt) > decide.ActiveJobRequeue
}

// nextAttempt is one more than the newest retained Job of op.
func nextAttempt(all []batchv1.Job, op decide.Operation) int {
	n := 0
	for i := range all {
		if jobOp(&all[i]) == op {
			n = max(n, jobAttempt(&all[i]))
		}
	}
	return n + 1
}

// prunable returns the finished Jobs to delete: per operation, oldest
// first, the successes beyond keepSucceeded and the failures beyond
// keepFailed, always keeping the operation's newest success and its
// newest failure while no newer success exists. Running Jobs and Jobs
// not bookkept yet are never pruned.
func prunable(all []batchv1.Job, keepSucceeded, keepFailed int) []*batchv1.Job {
	byOp := map[decide.Operation][]*batchv1.Job{}
	for i := range all {
		j := &all[i]
		if finished, _, _, _ := jobs.Finished(j); finished && j.Annotations[infrav1.BookkeptAnnotation] == "true" {
			byOp[jobOp(j)] = append(byOp[jobOp(j)], j)
		}
	}
	var out []*batchv1.Job
	for _, list := range byOp {
		sort.SliceStable(list, func(a, b int) bool {
			_, _, ta, _ := jobs.Finished(list[a])
			_, _, tb, _ := jobs.Finished(list[b])
			return ta.After(tb)
		})
		succeeded, failed, seenSuccess := 0, 0, false
		for i, j := range list {
			// A plan Job that succeeded without a readable plan is kept as
			// a failure: its backoff counts it.
			_, ok, _, _ := jobs.Finished(j)
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

// prune deletes the finished Jobs beyond the history limits, with their
// pods (background propagation).
func (p *pass) prune(ctx context.Context) error {
	for _, j := range prunable(p.jobs, int(p.eff.Policy.SuccessfulJobsHistoryLimit), int(p.eff.Policy.FailedJobsHistoryLimit)) {
		if err := p.e.Client.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("pruning Job %s: %w", j.Name, err)
		}
	}
	return nil
}
