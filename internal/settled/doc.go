// Package settled owns the records of settled passes: what a pass that
// found nothing to do read, replayed against the manager's caches so that
// the engine skips the next pass while all of it reads the same, and the
// checkpoint that keeps those records (and the live reports' records,
// internal/livereport) across a restart of the manager or a change of
// leader.
//
// A pass is a function of what it reads and of the clock. A settled pass
// (nothing due, no Job, nothing written, no event) over the same reads
// before its own requeue would decide the same and write nothing again,
// so the engine skips it (Records.Recall): a resync, or a wake for a
// neighbour's change, then costs a replay of those reads against the
// caches instead of a dozen live reads. The replay compares
// resourceVersions in the informers, which the event that wakes a pass
// has already reached; a Secret or Lease, which no controller watches, is
// compared in a metadata cache of the namespaces settled passes read
// (readset.View, started when the first record reads there), so a resync
// still sees a rotated credential or a changed bootstrap Secret.
//
// A record is only ever a reason to skip a pass that would decide the
// same: the first read that returns something else sends the object
// through a full pass, and a checkpoint of another build or configuration
// of the manager (its fingerprint) is not loaded at all. Whether a pass
// settled is the engine's to say (Pass); this package keeps, replays,
// forgets and saves what it read.
package settled
