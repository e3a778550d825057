// Package workspace is the lifecycle the three workload kinds share:
// observe (gather a Snapshot) -> decide (a pure function of the snapshot)
// -> act (start exactly one Job, or wait, or release) -> status.
//
// This file set holds the pure part: Snapshot, Decision and Decide, the
// documented decision and schedule tables with every row a named reason.
// Decide reads no client and no clock: everything it needs is in the
// snapshot, so that it is table-tested row by row.
package workspace
