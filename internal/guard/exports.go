package guard

import (
	"encoding/json"
	"fmt"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/approvals"
	"captf.io/captf/internal/inputs"
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

// AppliedExports is the exports hash of the pool's last successful apply
// ("" when it never applied); known is false when it cannot be proven:
// the record has none and the applied record does not hold the state's
// inputs.
func (f Facts) AppliedExports() (hash string, known bool) {
	if a := f.Attempt; a != nil && a.AppliedExports != "" {
		return a.AppliedExports, true
	}
	if f.StateAbsent {
		return "", true // nothing applied
	}
	if ap := f.Applied; ap != nil && ap.InputsHash != "" && f.Keyed(ap.InputsHash) == f.StateInputsHash {
		return inputs.ExportsHash(ap.Tfvars), true
	}
	return "", false
}

// ExportsDiffer: an apply rendering exports must be guarded, because they
// differ from the last applied ones, or an earlier change may have partly
// applied, or the last applied exports are unknown.
func (f Facts) ExportsDiffer(exports string) bool {
	if !f.GuardsExports || exports == "" {
		return false
	}
	if a := f.Attempt; a != nil && a.PartialExports != "" {
		return true
	}
	applied, known := f.AppliedExports()
	return !known || (applied != "" && applied != exports)
}

// ExportsGuarded: the apply of the inputs as rendered is guarded.
func (f Facts) ExportsGuarded() bool { return f.ExportsDiffer(f.Exports) }

// ExportsWithdrawn: a pool's live ExportsChange plan is moot because its
// current inputs (held back or not) render the applied exports again.
func (f Facts) ExportsWithdrawn(pl *infrav1.TerraformPlan) bool {
	if pl.Spec.Reason != infrav1.PlanReasonExportsChange || !f.GuardsExports {
		return false
	}
	current := f.Exports
	if f.Held != nil {
		current = f.Held.Exports
	}
	return !f.ExportsDiffer(current)
}

// HoldBack returns the change a pool holds back, given the approval and
// exports hashes of its current rendering (nil when it holds nothing):
// the exports differ from the recorded last applied ones, nothing partly
// applied, and the ExportsChange plan of that approval hash waits for
// approval. Without the applied exports on record nothing is held: the
// pool waits like a cluster.
func (f Facts) HoldBack(approval, exports string) *Held {
	a := f.Attempt
	if !f.GuardsExports || a == nil || a.AppliedExports == "" || a.PartialExports != "" || exports == a.AppliedExports {
		return nil
	}
	pl := f.Live()
	if pl == nil || pl.Spec.Reason != infrav1.PlanReasonExportsChange || approvals.Approved(pl) || f.Keyed(pl.Spec.InputsHash) != approval {
		return nil
	}
	ap := f.Applied
	if ap == nil || inputs.ExportsHash(ap.Tfvars) != a.AppliedExports {
		return nil
	}
	return &Held{Plan: pl.Name, Approval: approval, Exports: exports, Applied: inputs.Exports(ap.Tfvars)}
}

// exportsNote says why every apply of a pool is guarded, when it is not
// only because the exports changed ("" otherwise).
func (f Facts) exportsNote() string {
	if !f.GuardsExports {
		return ""
	}
	if a := f.Attempt; a != nil && a.PartialExports != "" {
		var partial struct{ Job string }
		_ = json.Unmarshal([]byte(a.PartialExports), &partial)
		return fmt.Sprintf("; an earlier exports change may have partly applied (Job %s), so every apply is guarded until one succeeds", partial.Job)
	}
	if _, known := f.AppliedExports(); !known {
		return "; the cluster exports of the pool's last successful apply are unknown, so every apply is guarded until one succeeds"
	}
	return ""
}
