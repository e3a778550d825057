package workspace

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
)

// history is what the decision table knows of the object's finished Jobs.
func (p *pass) history() []decide.FinishedJob {
	var out []decide.FinishedJob
	for i := range p.jobs {
		if fj, ok := jobs.Summary(&p.jobs[i]); ok {
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
	name := approvals.Name(p.obj.GetName(), fj.Name, fj.PlanHash)
	for i := range p.plans {
		if p.plans[i].Name == name {
			return !approvals.Live(&p.plans[i])
		}
	}
	if left := decide.ActiveJobRequeue - p.now.Sub(fj.FinishedAt); left >= 0 {
		// Not found yet: this pass looks again once the minute is over
		// (a grace, not a requeue: Options.Timing does not shorten it),
		// even if it decides nothing is due (a settled pass is skipped
		// until its requeue).
		p.lookAgainIn(left + time.Second)
		return false
	}
	return true
}

// prune deletes the finished Jobs beyond the history limits, with their
// pods (background propagation).
func (p *pass) prune(ctx context.Context) error {
	for _, j := range jobs.Prunable(p.jobs, int(p.eff.Policy.SuccessfulJobsHistoryLimit), int(p.eff.Policy.FailedJobsHistoryLimit)) {
		if err := p.e.client().Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("pruning Job %s: %w", j.Name, err)
		}
	}
	return nil
}
