// Package workspace is the lifecycle engine the three workload kinds
// share: a pass observes the object, its Jobs, plans, state and inputs
// into a decide.Snapshot, decides with decide.Decide, does the chores
// decide.Chores picks from the same snapshot (chores.go), acts (starts
// exactly one Job, or waits, or releases) and writes the status.
//
// What the engine does not own lives in the rooms it calls:
//   - internal/decide: the pure decision, schedule, chore and start-time
//     wait tables, and the durations a manager may shorten (Timing);
//   - internal/conditions: the pure rules of what a pass reports;
//   - internal/roles: what differs between the kinds (owner, inputs,
//     outputs, the after-step, the kind's own status, machine
//     remediation, a cluster's dependents), asked as capabilities, never
//     branched on;
//   - internal/gates: the run lease, the cluster operation gate, the Job
//     slots, when a lease or lock holder is dead, and the leases' deletion;
//   - internal/custody: the state Secrets' ownership, backups, retained
//     state and its adoption, restore requests, the state lock, the state
//     read and its decode cache (States), and letting the state go;
//   - internal/approvals: the TerraformPlan lifecycle;
//   - internal/guard: which plan stands for the current inputs (or why
//     it no longer does), how the plans move before the decision, the
//     history the decision reads, how a Job is guarded as it starts, a
//     Manual plan's status, a pool's guarded exports change and the one it
//     holds back, what a waiting change says, and keying stored hashes
//     with the plan key;
//   - internal/livereport: which conditions are live reports, and the
//     record each one covers, kept across passes and in the checkpoint;
//   - internal/settled: the records of settled passes, replayed to skip
//     the next pass while what they read holds, and the checkpoint that
//     keeps them (and the live reports' records) across a restart;
//   - internal/echo: what the engine expects of the watch events of its
//     own writes, which the workload controllers drop;
//   - internal/writecheck: the client whose writes first confirm, live,
//     an owner the pass read from the cache;
//   - internal/protection: the finalizer that keeps a destroy's Secrets;
//   - internal/jobs: the Job builders and the readers of an object's Jobs
//     and their pods (history, outcome and verdict, image choice and
//     image-pull verdict, stuck Jobs);
//   - internal/runs: their writes (a Job and its per-run Secret created,
//     stopped, deleted; the orphan sweep);
//   - internal/records, internal/inputs, internal/credentials,
//     internal/runnerrbac, internal/evacuation, pkg/state.
//
// What stays here is the pass itself: observing into the snapshot
// (observe.go, inputs.go, the readers it calls), the
// chores (chores.go), acting on the decision (act.go, start.go), the
// bookkeeping of finished Jobs (bookkeep.go) and the one status patch
// (status.go).
package workspace
