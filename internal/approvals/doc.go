// Package approvals owns the TerraformPlan lifecycle as the manager keeps
// it: what a plan's phase is and whether it is live or approved, the name
// and summary of a plan made from a Job's result (New), and the manager's
// writes of a plan (its creation, superseding the target's other live
// plans, Publish; its phase label and its status conditions; the pruning
// of terminal plans), and where a plan moves before the engine
// decides (Move, LateApproval: an approval recorded, an outcome reached, a
// plan superseded), and the phase an apply's outcome ends its plan in
// (EndPhase). Which plan stands for the current inputs, and why one
// no longer does, are internal/guard's rules; when a plan is made, and
// the other facts a move is chosen from (the apply's outcome), the
// engine's (internal/workspace).
package approvals
