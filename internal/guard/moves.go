package guard

import (
	"maps"

	batchv1 "k8s.io/api/batch/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/jobs"
)

// Move is a phase a plan moves to before the decision, to be written
// after it. Read is the plan as read: the write's base, so that a plan
// changed meanwhile is not written (the next pass decides again on it).
type Move struct {
	// I indexes the plan in the plans moved.
	I    int
	Read *infrav1.TerraformPlan
	To   infrav1.PlanPhase
	// Why a live plan is superseded ("" otherwise).
	Why string
	// LateApproval: the plan was superseded before its approval landed;
	// its status says so, and Current names the live plan then.
	LateApproval bool
	Current      string
}

// Moving is what the moves read besides the Facts.
type Moving struct {
	// Frozen: the pass is paused or deleting; it records approvals,
	// outcomes and the reference, and supersedes nothing.
	Frozen bool
	// Running: a Job of the object runs; no plan is found moot meanwhile.
	Running bool
	// NoApplyDue: the decision, with the plans as read, would start no
	// apply (decide.Snapshot.NoApplyDue); read only when not frozen, no
	// Job runs and the inputs build.
	NoApplyDue bool
	// Jobs are the object's Jobs, for the outcome of a plan's apply.
	Jobs []batchv1.Job
}

// MovePlans moves f.Plans along before the decision, as approvals.Move
// and LateApproval say: an approval is recorded (PlanApproved), a moot
// plan is superseded, an approval that raced a supersession is marked
// ignored. It returns the plans as moved (f.Plans is not changed) and the
// moves to write. No plan is found moot while a Job runs or the inputs
// cannot be built.
func (f Facts) MovePlans(m Moving) ([]infrav1.TerraformPlan, []Move) {
	plans := append([]infrav1.TerraformPlan(nil), f.Plans...)
	f.Plans = plans
	newest := approvals.Newest(plans)
	var moves []Move
	move := func(i int, mv Move) {
		pl := &plans[i]
		mv.I, mv.Read = i, pl.DeepCopy()
		moves = append(moves, mv)
		if mv.LateApproval {
			return
		}
		pl.Labels = maps.Clone(pl.Labels)
		if pl.Labels == nil {
			pl.Labels = map[string]string{}
		}
		pl.Labels[infrav1.PlanPhaseLabel] = string(mv.To)
	}
	for i := range plans {
		pl := &plans[i]
		if approvals.LateApproval(pl) {
			current := "no plan waits for approval now"
			if l := approvals.Newest(plans); l != nil {
				current = "the current plan is " + l.Name
			}
			move(i, Move{To: infrav1.PlanPhaseSuperseded, LateApproval: true, Current: current})
			continue
		}
		if !approvals.Live(pl) {
			continue
		}
		mf := approvals.MoveFacts{Frozen: m.Frozen, Newest: pl == newest, Outcome: Outcome(pl, m.Jobs)}
		if !m.Frozen && mf.Newest && mf.Outcome == "" && !m.Running && f.PlanInputs() != "" {
			mf.Moot = f.Moot(pl, m.NoApplyDue)
		}
		if to, why := approvals.Move(pl, mf); to != "" {
			move(i, Move{To: to, Why: why})
		}
	}
	return plans, moves
}

// Outcome is the terminal phase a bookkept apply Job of js that ran the
// live plan pl gave it ("" when none did): Applied after a success,
// Failed after a plan-changed result. Bookkeeping sets it; this repairs a
// transition a stale read made it skip.
func Outcome(pl *infrav1.TerraformPlan, js []batchv1.Job) infrav1.PlanPhase {
	for i := range js {
		j := &js[i]
		if j.Annotations[infrav1.PlanAnnotation] != pl.Name || j.Annotations[infrav1.BookkeptAnnotation] != "true" {
			continue
		}
		_, succeeded, _, _ := jobs.Finished(j)
		if ph := approvals.EndPhase(succeeded, j.Annotations[infrav1.PlanChangedAnnotation] == "true"); ph != "" {
			return ph
		}
	}
	return ""
}
