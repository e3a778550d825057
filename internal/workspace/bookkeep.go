package workspace

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/crashpoint"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/plan"
	"captf.io/captf/internal/records"
)

// readOutcome reads the finished Job's pods, live, for its outcome.
func (p *pass) readOutcome(ctx context.Context, j *batchv1.Job) (jobs.Outcome, error) {
	var pods corev1.PodList
	if err := p.e.APIReader.List(ctx, &pods, client.InNamespace(j.Namespace), client.MatchingLabels{batchv1.JobNameLabel: j.Name}); err != nil {
		return jobs.Outcome{}, fmt.Errorf("listing the pods of Job %s: %w", j.Name, err)
	}
	return jobs.OutcomeOf(j, pods.Items), nil
}

// readOutcomes reads the outcome of each finished Job not bookkept yet,
// oldest-finished first (jobs.ToBookkeep).
func (p *pass) readOutcomes(ctx context.Context) error {
	var read []jobs.Outcome
	for _, j := range jobs.ToBookkeep(p.jobs) {
		o, err := p.readOutcome(ctx, j)
		if err != nil {
			return err
		}
		read = append(read, o)
	}
	p.books.outcomes = read
	return nil
}

// bookkeep (the chore Bookkeep) records the outcomes read, in order, once
// (a pass that fails midway reads them again next time): status.lastRun,
// the Job's condition, events, the applied record and adoption after a
// successful apply, then the per-run Secret and the run lease go. In that
// order the newest Job's outcome is the one the records, conditions and
// status.lastRun end with. The Jobs are marked bookkept after the status
// patch (markBookkept).
func (p *pass) bookkeep(ctx context.Context) error {
	outcomes := p.books.outcomes
	p.books.outcomes = nil
	for _, o := range outcomes {
		if err := p.recordOutcome(ctx, o); err != nil {
			return err
		}
		crashpoint.Hit(crashpoint.AfterOutcomeRecorded)
		p.books.bookkept = append(p.books.bookkept, o.Job)
	}
	if n := len(outcomes); n > 0 {
		p.w.Status.LastRun = outcomes[n-1].LastRun()
	}
	return nil
}

// recordOutcome turns one outcome into its condition, events and
// annotations, records what its operation leaves (recordApply,
// recordRestore, a refresh's or drift check's time, a plan), marks what an
// apply may have done, and lets its per-run Secret and run lease go.
func (p *pass) recordOutcome(ctx context.Context, o jobs.Outcome) error {
	j := o.Job
	if j.Annotations == nil {
		j.Annotations = map[string]string{}
	}
	v := o.Verdict()
	kind := v.Kind
	maps.Copy(j.Annotations, v.Marks)
	if v.Rescued != "" {
		// Also on the attempt record, which outlives the Job (history
		// pruning, a deleted Job, clusterctl move). The record lives in
		// the object's namespace, also when the Job ran evacuated.
		if _, err := records.MarkRescued(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName(), v.Rescued); err != nil {
			return fmt.Errorf("recording the rescued state of Job %s: %w", j.Name, err)
		}
	}
	p.observe(func() { p.observeJob(o, kind) })
	cond, ev := conditions.Job(o.Facts(kind))
	// A record, which ends a live report's episode (endLiveReports), but
	// for a plan waiting for its approval (a live report: livereport.Live).
	p.report(cond)
	p.events = append(p.events, ev)
	p.books.newSample = p.books.newSample || v.NewSample
	var err error
	switch o.Op {
	case decide.OpApply:
		err = p.recordApply(ctx, o, kind)
	case decide.OpRefresh:
		if o.Succeeded {
			p.w.Status.LastRefresh = &metav1.Time{Time: j.Status.CompletionTime.Time}
		}
	case decide.OpDrift:
		if o.Succeeded {
			p.w.Status.LastDriftCheck = &metav1.Time{Time: j.Status.CompletionTime.Time}
			p.recordDrift(o)
		}
	case decide.OpRestore:
		err = p.recordRestore(ctx, o)
	case decide.OpPlan:
		if o.Succeeded && o.Result != nil && o.Result.Plan != nil {
			err = p.finishPlan(ctx, o)
		}
	}
	if err != nil {
		return err
	}
	evidence := o.Evidence(p.jobs, kind)
	if evidence.Unconfirmed {
		if err := p.markUnconfirmed(ctx, j.Name, evidence.Newer); err != nil {
			return err
		}
	}
	if evidence.Possibly {
		if err := records.MarkPossiblyApplied(ctx, p.e.client(), p.e.APIReader, p.obj, p.role.Kind(), j.Name, evidence.Newer, false, p.caps().GuardsExports); err != nil {
			return err
		}
	}
	if o.Result != nil && o.Result.Runtime.Version != "" {
		if p.w.Status.Source == nil {
			p.w.Status.Source = &infrav1.SourceStatus{}
		}
		p.w.Status.Source.RuntimeVersion = o.Result.Runtime.Version
	}
	if err := p.e.runs().DeletePerRunSecret(ctx, j); err != nil {
		return err
	}
	return p.releaseRunLease(ctx, j.Name)
}

// recordApply is what a finished apply, of verdict kind, leaves: a
// success's bookkeeping, the drift it settles, the plan a blocked or (under
// Manual) changed plan publishes, and an approved plan's end.
func (p *pass) recordApply(ctx context.Context, o jobs.Outcome, kind infrav1.RunErrorKind) error {
	j := o.Job
	if o.Succeeded {
		if err := p.finishApply(ctx, o); err != nil {
			return err
		}
	}
	p.driftAfterApply(o)
	if kind == infrav1.RunErrorBlocked && o.Result.Plan != nil && p.planned() {
		j.Annotations[infrav1.PlanHashAnnotation] = o.Result.Plan.Hash
		reason := infrav1.PlanReasonDestructive
		if !p.guarded() {
			reason = infrav1.PlanReasonExportsChange
		}
		if err := p.createPlan(ctx, o, reason); err != nil {
			return err
		}
	}
	if err := p.finishApprovedApply(ctx, o, kind); err != nil {
		return err
	}
	// Under Manual the changed plan is the next one to approve.
	if kind == infrav1.RunErrorPlanChanged && o.Result.Plan != nil && p.manual() {
		j.Annotations[infrav1.PlanHashAnnotation] = o.Result.Plan.Hash
		if o.Result.Plan.Hash != plan.EmptyPlanHash {
			return p.createPlan(ctx, o, infrav1.PlanReasonManual)
		}
	}
	return nil
}

// recordRestore is what a finished restore leaves: a success clears an
// earlier apply's unknown outcome and rescued state (the restored state is
// what exists now) and adopts the state with the backup's inputs hash;
// either way its serial is consumed (finishRestore).
func (p *pass) recordRestore(ctx context.Context, o jobs.Outcome) error {
	if o.Succeeded {
		if _, err := records.ClearUnconfirmedApply(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName()); err != nil {
			return err
		}
		if _, err := records.ClearRescued(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName()); err != nil {
			return err
		}
		if err := p.adopt(ctx, o.Job.Annotations[infrav1.InputsHashAnnotation], true); err != nil {
			return err
		}
	}
	p.finishRestore(o)
	return nil
}

// observeJob records a finished Job's metrics.
func (p *pass) observeJob(o jobs.Outcome, kind infrav1.RunErrorKind) {
	res, errorKind, step := o.MetricLabels(kind)
	_, _, finished, _ := jobs.Finished(o.Job)
	k, op := p.role.Kind(), string(o.Op)
	metrics.ObserveJob(k, op, res, finished.Sub(o.Job.CreationTimestamp.Time))
	if !o.Started.IsZero() {
		metrics.JobQueue.WithLabelValues(k, op).Observe(o.Started.Sub(o.Job.CreationTimestamp.Time).Seconds())
	}
	if o.Succeeded {
		metrics.LastSuccess.WithLabelValues(k, p.obj.GetNamespace(), p.obj.GetName(), op).Set(float64(finished.Unix()))
		metrics.ObserveAttempts(k, op, p.attempts(o.Op, finished))
	} else {
		metrics.ObserveJobError(k, op, errorKind, step)
	}
	metrics.ObserveJobResult(k, op, o.Result)
}

// attempts is the attempt number of a Job of op that succeeded at
// finished: 1 plus the failures of op since its previous success.
func (p *pass) attempts(op decide.Operation, finished time.Time) int {
	s := decide.Snapshot{History: slices.DeleteFunc(p.history(), func(fj decide.FinishedJob) bool { return !fj.FinishedAt.Before(finished) })}
	n, _ := s.ConsecutiveFailures(op)
	return n + 1
}

// markBookkept writes the bookkeeping annotations on the Jobs read this
// pass, after the status patch succeeded: a failed patch re-reads them.
// The marks wake no pass (the pass has recorded everything they say),
// unless they make older Jobs prunable: the next pass prunes them.
func (p *pass) markBookkept(ctx context.Context) error {
	quiet := len(jobs.Prunable(jobs.Marked(p.jobs, p.books.bookkept), int(p.eff.Policy.SuccessfulJobsHistoryLimit), int(p.eff.Policy.FailedJobsHistoryLimit))) == 0
	for _, j := range p.books.bookkept {
		patch := client.MergeFrom(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{}})
		ann := jobs.BookkeptMarks(j)
		target := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: j.Name, Annotations: ann}}
		if quiet {
			p.e.ExpectJobUpdate(jobs.WithAnnotations(j, ann))
		}
		if err := p.e.client().Patch(ctx, target, patch); err != nil {
			p.e.ForgetJobEcho(j)
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("marking Job %s bookkept: %w", j.Name, err)
			}
		}
	}
	return nil
}
