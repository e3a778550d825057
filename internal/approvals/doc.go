// Package approvals owns the TerraformPlan lifecycle as the manager keeps
// it: what a plan's phase is and whether it is live or approved, the name
// and summary of a plan made from a Job's result, and the manager's writes
// of a plan (its creation, its phase label and its status conditions, the
// pruning of terminal plans). When a plan is made, superseded or approved
// is the engine's decision (internal/workspace); how it is written is
// this package's.
package approvals
