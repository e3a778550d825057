// Package livereport owns the live reports' records. A live report is a
// fact of now on a condition that otherwise holds a record: a wait before
// a Job's start, a Job held by its policy or inputs, a running refresh,
// drift or remediation, a change waiting for its plan's approval, a pod
// that cannot pull its image, a state lock another holder keeps. Once the
// fact ends, the condition says its record again: what the last Job (or
// the state) said before the live report began.
//
// It owns which conditions are live reports (Live, Types), the record
// each one covers, per object and condition type (Covers; Store: kept when
// the report begins, forgotten once the record is said again), how an
// episode ends at the end of a pass (Close: the record said again, the
// condition dropped, or the report going on), and the records' checkpoint
// document (Doc, Format), loaded only as far as a pass could have kept it
// (Store.Take). Which reports a pass makes, and when its status is
// written, are the engine's (internal/workspace, live.go).
package livereport
