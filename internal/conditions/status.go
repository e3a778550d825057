package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Pass is what the conditions a pass leaves are computed from.
type Pass struct {
	// Previous are the conditions of the object as the pass read it.
	Previous []metav1.Condition
	// Reported are the pass's reports, one per type (a live report that
	// ended is reported as the record it covered).
	Reported []metav1.Condition
	// Dropped are the types the pass found absent again (a live report
	// that ended had covered no condition), unless it reported them.
	Dropped []string
	// Ran are the steps the pass ran, when it completed (a pass that
	// failed vouches for none): a type one of them owns (Owner) that the
	// pass did not say goes.
	Ran []Step
	// FromState is what ApplyJobSucceeded says where no Job reported one
	// (the state vouches for the current inputs, or NoApplyYet).
	FromState metav1.Condition
	// Dependents: the kind has dependents, and its first visit reports
	// DeletionBlocked (FirstVisit).
	Dependents bool
	// Provisioned and ReadyFollowsApplies choose what Ready summarises
	// (ReadyInputs).
	Provisioned, ReadyFollowsApplies bool
	// Generation is the generation the conditions were looked at for.
	Generation int64
	// Now stamps the transitions.
	Now metav1.Time
}

// Status computes every condition of a workload that a pass leaves, in
// one place and from the pass's facts alone:
//   - a type the pass reported takes its report, and one it dropped goes;
//   - ApplyJobSucceeded, while absent or NoApplyYet and not reported,
//     says what the state vouches for (FromState);
//   - a type the object never had takes its first-visit value;
//   - a type a step owns (Owner) that the step ran (Ran) without saying
//     goes: no fact carries over a pass that computed it again;
//   - every other type keeps its previous value: a record (a Job's
//     outcome, a drift finding, InputsApplied's verdict) until a newer
//     one, or a fact whose step the pass did not run (it stopped before:
//     paused, waiting for its owner, failed; or the step does not run
//     then: the state is not read while a Job runs);
//   - Ready summarises them.
//
// Every condition says it was looked at for Generation. New types are
// appended in that order; existing ones keep their place.
func Status(in Pass) []metav1.Condition {
	out := make([]metav1.Condition, len(in.Previous))
	copy(out, in.Previous)
	set := func(c metav1.Condition) {
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = in.Now
		}
		meta.SetStatusCondition(&out, c)
	}
	reported := map[string]bool{}
	for _, c := range in.Reported {
		reported[c.Type] = true
		set(c)
	}
	for _, t := range in.Dropped {
		if !reported[t] {
			meta.RemoveStatusCondition(&out, t)
		}
	}
	unset := func(t string) bool { return !reported[t] && meta.FindStatusCondition(in.Previous, t) == nil }
	if c := meta.FindStatusCondition(in.Previous, infrav1.ApplyJobSucceededCondition); !reported[infrav1.ApplyJobSucceededCondition] &&
		(c == nil || c.Reason == infrav1.NoApplyYetReason) {
		set(in.FromState)
	}
	for _, c := range FirstVisit(in.Dependents) {
		if unset(c.Type) {
			set(c)
		}
	}
	for _, t := range Unsaid(in) {
		meta.RemoveStatusCondition(&out, t)
	}
	set(Ready(out, ReadyInputs(in.Provisioned, in.ReadyFollowsApplies)))
	for i := range out {
		out[i].ObservedGeneration = in.Generation
	}
	return out
}
