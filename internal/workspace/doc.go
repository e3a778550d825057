// Package workspace is the lifecycle engine the three workload kinds
// share: a pass observes the object, its Jobs, plans, state and inputs
// into a decide.Snapshot, decides with decide.Decide, does the chores
// decide.Chores picks from the same snapshot (chores.go), acts (starts
// exactly one Job, or waits, or releases) and writes the status.
//
// What the engine does not own lives in the rooms it calls:
//   - internal/decide: the pure decision and schedule tables;
//   - internal/roles: what differs between the kinds (owner, inputs,
//     outputs, the after-step, the kind's own status, machine
//     remediation), asked, never branched on;
//   - internal/gates: the run lease, the cluster operation gate, the Job
//     slots and when a lease or lock holder is dead;
//   - internal/jobs: the Job builders and the readers of an object's Job
//     history;
//   - internal/records, internal/inputs, internal/credentials,
//     internal/runnerrbac, internal/evacuation, pkg/state.
package workspace
