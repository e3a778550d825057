// Package workspace is the lifecycle engine the three workload kinds
// share: a pass observes the object, its Jobs, plans, state and inputs
// into a decide.Snapshot, decides with decide.Decide, acts (starts exactly
// one Job, or waits, or releases) and writes the status. What differs
// between the kinds is asked of their roles (internal/roles), never
// branched on.
package workspace
