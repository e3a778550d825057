// Package guard owns the rules of an object's guarded changes: which
// TerraformPlan stands for the change its current inputs make (approved,
// pending, or moot and why), how the plans move before a pass decides
// (MovePlans: an approval recorded, an older or moot plan superseded, an
// apply's outcome, a late approval marked), where a Manual object's plan
// stands, when a pool's apply is guarded because the cluster exports it
// renders change (and when it holds that change back), how a Job is
// guarded as it starts (JobGuard), what a waiting change says to the
// user who must approve it, whether that wait is still said
// (WaitsForApproval, StillAwaited), and what ApplyJobSucceeded says once
// the change is withdrawn (Withdrawn). It also keys stored hashes with the
// object's plan key (Keying), as every comparison of them must.
//
// It is pure: Facts are what a pass read (its plans, its input records,
// its current inputs' hashes, its Job history, the state's inputs hash),
// and every rule is a method that returns a value. Reading and writing
// the plans is the engine's (internal/workspace) and internal/approvals';
// the phase rules of one plan are approvals'.
package guard
