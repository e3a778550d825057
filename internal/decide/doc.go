// Package decide is the lifecycle's decision table: Snapshot (everything
// a pass observed), Decision, and Decide, the documented decision and
// schedule tables with every row a named reason. It is pure: it imports
// no client, no clock and no Kubernetes type (a wall test checks its whole
// dependency closure), so that every row is table-tested and a sequence
// of snapshots replays to a checked-in decision log.
package decide
