// Package echo owns what the engine expects of the watch events of its
// own writes, so that the workload controllers drop those events instead
// of passing over an object to read back what its last pass wrote.
//
// A pass ends with one status write, and the object's own watch sees it
// come back as an update, often before the write's response. A pass woken
// by that echo alone reads what the previous pass wrote and writes
// nothing, at the cost of a dozen live reads. So before the write the
// engine remembers, per object, the object as the pass means to leave it
// (Filter.ExpectWrites), and the kind's controller drops an update that
// shows exactly that (Filter.OwnEcho). A pass that writes a contract field
// of the spec (a machine's spec.providerID) writes twice, the spec then
// the status: both are remembered, in order (the first is the object
// with the status it read, WithStatusOf; whether the pass moved its
// metadata or spec at all is Moved). Any other update still wakes
// a pass: a write that met another change on the way, a status written by
// another hand, a relist that folds the echo with a later change.
//
// Likewise for an object's Jobs: a pass that creates a Job, and the pass
// that marks a finished Job bookkept, know what the Job's next event
// shows (Filter.ExpectJobCreate, Filter.ExpectJobUpdate), and the Job
// watch drops it (Filter.OwnJobCreate, Filter.OwnJobUpdate).
//
// An expectation is only ever a reason to skip a pass that would read
// what was written: any doubt (a fingerprint that cannot be computed, an
// update that differs) forgets it, and the event wakes a pass.
package echo
