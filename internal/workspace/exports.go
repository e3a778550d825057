package workspace

import (
	"context"
	"encoding/json"
	"fmt"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/records"
)

// The pool exports guard. A pool apply rendering other cluster exports
// (captf_cluster_outputs) than the pool's last successful apply did is
// guarded: it stops before deleting or replacing members and its plan
// becomes an ExportsChange TerraformPlan, approved by the pool's approval
// hash (the inputs hash without bootstrap_data, which rotates). While
// that plan waits, the pool holds the change back: it renders the exports
// of its last successful apply (read from the applied record), so
// bootstrap data rotations apply at once and refresh and drift Jobs see
// what is applied. An exports change that may have partly applied
// (captf.io/partial-cluster-outputs) holds nothing back and guards every
// apply until one succeeds; so do unknown last exports.

// heldChange is an exports change a pool holds back.
type heldChange struct {
	// plan is the Pending ExportsChange plan; approval and exports are the
	// approval and exports hashes of the current (held back) inputs.
	plan, approval, exports string
	// applied are the exports of the last successful apply, rendered
	// meanwhile.
	applied json.RawMessage
}

// appliedExports is the exports hash of the pool's last successful apply
// ("" when it never applied); known is false when it cannot be proven:
// the record has none and the applied record does not hold the state's
// inputs.
func (p *pass) appliedExports() (hash string, known bool) {
	if a := p.inputs.attempt; a != nil && a.AppliedExports != "" {
		return a.AppliedExports, true
	}
	if p.stateStatus() == decide.StateAbsent {
		return "", true // nothing applied
	}
	if ap := p.inputs.applied; ap != nil && ap.InputsHash != "" && p.keyed(ap.InputsHash) == p.stateInputsHash() {
		return inputs.ExportsHash(ap.Tfvars), true
	}
	return "", false
}

// exportsDiffer: an apply rendering exports must be guarded, because they
// differ from the last applied ones, or an earlier change may have partly
// applied, or the last applied exports are unknown.
func (p *pass) exportsDiffer(exports string) bool {
	if !p.caps().GuardsExports || exports == "" {
		return false
	}
	if a := p.inputs.attempt; a != nil && a.PartialExports != "" {
		return true
	}
	applied, known := p.appliedExports()
	return !known || (applied != "" && applied != exports)
}

// exportsGuarded: the apply of the inputs as rendered is guarded.
func (p *pass) exportsGuarded() bool { return p.exportsDiffer(p.inputs.exports) }

// exportsWithdrawn: a pool's live ExportsChange plan is moot because its
// current inputs (held back or not) render the applied exports again.
func (p *pass) exportsWithdrawn(pl *infrav1.TerraformPlan) bool {
	if pl.Spec.Reason != infrav1.PlanReasonExportsChange || !p.caps().GuardsExports {
		return false
	}
	current := p.inputs.exports
	if h := p.inputs.held; h != nil {
		current = h.exports
	}
	return !p.exportsDiffer(current)
}

// holdBack returns the change a pool holds back, given its current
// rendering r (nil when it holds nothing): r's exports differ from the
// recorded last applied ones, nothing partly applied, and the
// ExportsChange plan of r's approval hash waits for approval. Without the
// applied exports on record nothing is held: the pool waits like a
// cluster.
func (p *pass) holdBack(r rendered) *heldChange {
	a := p.inputs.attempt
	if !p.caps().GuardsExports || a == nil || a.AppliedExports == "" || a.PartialExports != "" || r.exports == a.AppliedExports {
		return nil
	}
	pl := p.livePlan()
	if pl == nil || pl.Spec.Reason != infrav1.PlanReasonExportsChange || approvals.Approved(pl) || p.keyed(pl.Spec.InputsHash) != r.approval {
		return nil
	}
	ap := p.inputs.applied
	if ap == nil || inputs.ExportsHash(ap.Tfvars) != a.AppliedExports {
		return nil
	}
	return &heldChange{plan: pl.Name, approval: r.approval, exports: r.exports, applied: inputs.Exports(ap.Tfvars)}
}

// observeHold reads whether captf.io/pending-cluster-outputs is in step
// with the held change (the chore RecordHeldExports writes it when not)
// and, while one is held, reports it on ApplyJobSucceeded (the pool is
// not Ready until the change is approved).
func (p *pass) observeHold() {
	p.inputs.holdDoc, p.inputs.holdDue = "", false
	a := p.inputs.attempt
	if a == nil || p.active != nil {
		return
	}
	doc := ""
	if h := p.inputs.held; h != nil {
		raw, _ := json.Marshal(map[string]string{"plan": h.plan, "approvalHash": h.approval, "exportsHash": h.exports})
		doc = string(raw)
		// A failed rotation apply keeps its own report.
		if j := (decide.Snapshot{History: p.history()}).Newest(decide.OpApply); j == nil || !j.CountsAsFailure() {
			p.set(conditions.ExportsHeld(p.blockedMessage()))
		}
	}
	p.inputs.holdDoc, p.inputs.holdDue = doc, a.PendingExports != doc
}

// recordHold is the chore RecordHeldExports: it writes
// captf.io/pending-cluster-outputs as observeHold found it should be.
func (p *pass) recordHold(ctx context.Context) error {
	doc := p.inputs.holdDoc
	if _, err := records.SetPendingExports(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName(), doc); err != nil {
		return fmt.Errorf("recording the held exports change: %w", err)
	}
	p.inputs.attempt.PendingExports, p.inputs.holdDue = doc, false
	return nil
}

// markPartialExports records that a pool apply Job that may have changed
// members rendered an exports change (captf.io/partial-cluster-outputs).
func (p *pass) markPartialExports(ctx context.Context, job string) error {
	if !p.caps().GuardsExports {
		return nil
	}
	if _, err := records.MarkPartialExports(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName(), job); err != nil {
		return fmt.Errorf("recording the partly applied exports change of Job %s: %w", job, err)
	}
	return nil
}

// exportsNote says why every apply of a pool is guarded, when it is not
// only because the exports changed ("" otherwise).
func (p *pass) exportsNote() string {
	if !p.caps().GuardsExports {
		return ""
	}
	if a := p.inputs.attempt; a != nil && a.PartialExports != "" {
		var partial struct{ Job string }
		_ = json.Unmarshal([]byte(a.PartialExports), &partial)
		return fmt.Sprintf("; an earlier exports change may have partly applied (Job %s), so every apply is guarded until one succeeds", partial.Job)
	}
	if _, known := p.appliedExports(); !known {
		return "; the cluster exports of the pool's last successful apply are unknown, so every apply is guarded until one succeeds"
	}
	return ""
}
