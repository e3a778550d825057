package workspace

import (
	"context"
	"encoding/json"
	"fmt"

	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/records"
)

// The pool exports guard's rules (which apply is guarded, which change
// is held back) are internal/guard's; the pass records the held change
// and reports it.

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
		raw, _ := json.Marshal(map[string]string{"plan": h.Plan, "approvalHash": h.Approval, "exportsHash": h.Exports})
		doc = string(raw)
		// A failed rotation apply keeps its own report.
		if j := (decide.Snapshot{History: p.history()}).Newest(decide.OpApply); j == nil || !j.CountsAsFailure() {
			p.set(conditions.ExportsHeld(p.guard().BlockedMessage()))
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
