package guard

import (
	"encoding/json"
	"fmt"
	"strings"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/plan"
	"captf.io/captf/internal/records"
)

// Facts are what the guard rules read of one pass.
type Facts struct {
	Keying
	// Plans are the object's TerraformPlans, newest first, as the pass
	// moved them so far.
	Plans []infrav1.TerraformPlan
	// GuardsExports: a pool, whose applies are guarded when the cluster
	// exports they render change. Manual: the object's applies wait for
	// an approved plan (applyPolicy Manual).
	GuardsExports, Manual bool
	// InputsHash, Approval and Exports are the current inputs' hash, and
	// a pool's approval hash (without bootstrap_data) and exports hash;
	// "" while the inputs do not build.
	InputsHash, Approval, Exports string
	// Held is the exports change the pool holds back (nil: none).
	Held *Held
	// Attempt and Applied are the object's input records, as read.
	Attempt, Applied *records.Record
	// StateAbsent: no state exists; StateInputsHash is the inputs hash on
	// the base state Secret, keyed.
	StateAbsent     bool
	StateInputsHash string
	// Target is the object as kubectl captf approve names it
	// (<short name>/<name>).
	Target string
}

// Held is an exports change a pool holds back.
type Held struct {
	// Plan is the Pending ExportsChange plan; Approval and Exports are the
	// approval and exports hashes of the current (held back) inputs.
	Plan, Approval, Exports string
	// Applied are the exports of the last successful apply, rendered
	// meanwhile.
	Applied json.RawMessage
}

// Live is the object's newest live plan (nil when none).
func (f Facts) Live() *infrav1.TerraformPlan { return approvals.Newest(f.Plans) }

// PlanInputs is the hash a plan of the object's current inputs names: the
// inputs hash, or a pool's approval hash (bootstrap data rotates) of the
// inputs it holds back, if any.
func (f Facts) PlanInputs() string {
	if !f.GuardsExports {
		return f.InputsHash
	}
	if f.Held != nil {
		return f.Held.Approval
	}
	return f.Approval
}

// Approved is the live, approved plan of the current inputs (nil when
// none): its apply runs with --expect-plan.
func (f Facts) Approved() *infrav1.TerraformPlan {
	if pl := f.Live(); pl != nil && approvals.Approved(pl) && f.PlanInputs() != "" && f.Keyed(pl.Spec.InputsHash) == f.PlanInputs() {
		return pl
	}
	return nil
}

// Pending is the live, unapproved Destructive or ExportsChange plan of
// the current inputs (nil when none, or while a pool holds its exports
// change back and applies rotations meanwhile).
func (f Facts) Pending() *infrav1.TerraformPlan {
	pl := f.Live()
	if pl == nil || approvals.Approved(pl) || pl.Spec.Reason == infrav1.PlanReasonManual || f.Held != nil ||
		f.PlanInputs() == "" || f.Keyed(pl.Spec.InputsHash) != f.PlanInputs() {
		return nil
	}
	return pl
}

// Moot says why a live plan no longer stands for an apply ("" while it
// does): the inputs no longer hash to it, no apply is due any more (the
// drift went away, the remediation cap was reached), the applyPolicy
// changed, or a pool's exports change was withdrawn.
func (f Facts) Moot(pl *infrav1.TerraformPlan, noApplyDue bool) string {
	switch {
	case f.Keyed(pl.Spec.InputsHash) != f.PlanInputs():
		return "the inputs no longer hash to " + f.Keyed(pl.Spec.InputsHash)
	case f.ExportsWithdrawn(pl):
		return "the pool's inputs render the cluster exports of its last successful apply again"
	case pl.Spec.Reason == infrav1.PlanReasonManual && !f.Manual:
		return "applyPolicy is no longer Manual"
	case pl.Spec.Reason == infrav1.PlanReasonDestructive && f.Manual:
		return "applyPolicy is Manual now: a plan Job plans the next apply"
	case !strings.HasPrefix(pl.Spec.PlanHash, plan.HashPrefix):
		return "its plan hash is of an older scheme; the next apply plans again and asks for a fresh approval"
	case noApplyDue && f.Held == nil:
		return "no apply of these inputs is due any more"
	}
	return ""
}

// PlanStatus is where the plan of the current inputs stands under Manual:
// approved, pending approval, or planned empty by a plan Job of history
// (the object's finished Jobs) newer than the newest apply.
func (f Facts) PlanStatus(history []decide.FinishedJob) decide.PlanStatus {
	if !f.Manual || f.InputsHash == "" {
		return decide.PlanNone
	}
	if f.Approved() != nil {
		return decide.PlanApproved
	}
	if pl := f.Live(); pl != nil && f.Keyed(pl.Spec.InputsHash) == f.InputsHash {
		return decide.PlanPending
	}
	h := decide.Snapshot{History: history}
	newestApply := h.Newest(decide.OpApply)
	var newestPlan *decide.FinishedJob
	for _, fj := range h.ByNewest(decide.OpPlan) {
		if fj.Succeeded {
			newestPlan = &fj
			break
		}
	}
	if newestPlan != nil && newestPlan.InputsHash == f.InputsHash && newestPlan.PlanHash == plan.EmptyPlanHash &&
		(newestApply == nil || newestApply.FinishedAt.Before(newestPlan.FinishedAt)) {
		return decide.PlanEmpty
	}
	return decide.PlanNone
}

// LastRealApply is the newest apply Job of history (the object's finished
// Jobs) that applied or failed, not one stopped before a destructive or
// changed plan, nor one interrupted; withdrawn names the newest such
// stopped Job after it.
func LastRealApply(history []decide.FinishedJob) (last decide.FinishedJob, withdrawn string, found bool) {
	for _, j := range (decide.Snapshot{History: history}).ByNewest(decide.OpApply) {
		if j.Blocked || j.PlanChanged || j.Interrupted {
			if withdrawn == "" && !j.Interrupted {
				withdrawn = j.Name
			}
			continue
		}
		return j, withdrawn, true
	}
	return last, withdrawn, false
}

// BlockedMessage says why an apply waits for approval and how to give it.
func (f Facts) BlockedMessage() string {
	pl := f.Live()
	if pl == nil || f.Keyed(pl.Spec.InputsHash) != f.PlanInputs() {
		return "The newest apply of these inputs stopped before deleting or replacing resources and the runner reported no plan to approve; change the inputs, or wait for the next guarded apply"
	}
	var destructive []string
	for _, r := range pl.Spec.Summary.Resources {
		if strings.Contains(r, "delete") || strings.Contains(r, "replace") {
			destructive = append(destructive, r)
		}
	}
	if len(destructive) > 5 {
		destructive = append(destructive[:5], "…")
	}
	return fmt.Sprintf("TerraformPlan %s plans inputs hash %s: %s (%s); nothing was applied%s. Approve it with kubectl captf approve %s, or change the inputs",
		pl.Name, f.Keyed(pl.Spec.InputsHash), approvals.Counts(pl.Spec.Summary), strings.Join(destructive, ", "), f.exportsNote(), f.Target)
}

// AwaitingMessage says which Manual plan waits for approval and how to
// give it.
func (f Facts) AwaitingMessage() string {
	pl := f.Live()
	if pl == nil {
		return "The plan of the current inputs waits for approval"
	}
	return fmt.Sprintf("TerraformPlan %s plans inputs hash %s: %s; approve it with kubectl captf approve %s",
		pl.Name, f.Keyed(pl.Spec.InputsHash), approvals.Counts(pl.Spec.Summary), f.Target)
}
