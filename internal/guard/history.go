package guard

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
)

// History is what the decision table knows of the finished Jobs js of the
// object named target, at now: their inputs hashes keyed with k, and
// whether the plan a blocked apply made has ended (BlockEnded) among
// plans. lookAgain is how soon a pass must look again for a blocked
// apply's plan not found yet (0: no such wait).
func History(js []batchv1.Job, k Keying, plans []infrav1.TerraformPlan, target string, now time.Time) (out []decide.FinishedJob, lookAgain time.Duration) {
	for i := range js {
		fj, ok := jobs.Summary(&js[i])
		if !ok {
			continue
		}
		fj.InputsHash = k.Keyed(fj.InputsHash)
		if fj.Blocked {
			ended, left := BlockEnded(fj, plans, target, now)
			fj.PlanEnded = ended
			if left > 0 && (lookAgain == 0 || left < lookAgain) {
				lookAgain = left
			}
		}
		out = append(out, fj)
	}
	return out, lookAgain
}

// BlockEnded: the plan the blocked apply fj of the object named target
// made is no longer live among plans, or cannot be found a minute after
// the Job ended (pruned, deleted; a younger one may not be in the cache
// yet). Not found within that minute, it has not ended, and lookAgain
// says when the minute is over (a grace, not a requeue: Options.Timing
// does not shorten it), so that a pass looks again then even if it
// decides nothing is due.
func BlockEnded(fj decide.FinishedJob, plans []infrav1.TerraformPlan, target string, now time.Time) (ended bool, lookAgain time.Duration) {
	if fj.PlanHash == "" {
		return false, 0 // no plan to approve: retried after RetryMax
	}
	name := approvals.Name(target, fj.Name, fj.PlanHash)
	for i := range plans {
		if plans[i].Name == name {
			return !approvals.Live(&plans[i]), 0
		}
	}
	if left := decide.ActiveJobRequeue - now.Sub(fj.FinishedAt); left >= 0 {
		return false, left + time.Second
	}
	return true, 0
}
