// Package readset owns the record of what one reconcile pass read and
// whether it wrote: each object it read (kind, key, resourceVersion, or
// that it was absent) and each list (kind, namespace, label selector, and
// the members' names and resourceVersions). A View replays such a record
// against the manager's caches, without a request for the kinds they
// hold, and tells whether a pass started now would read the same. It owns
// the metadata cache of the kinds no informer of the manager holds
// (Secrets, Leases): one per namespace a record reads, started with the
// first such record (Namespaces), so a namespace no record reads is never
// watched.
//
// The engine uses it to skip a pass over a settled object that nothing it
// depends on has touched: a resync, or a wake for a change that was not
// its own, costs a few cache lookups instead of a dozen live reads. A
// record that cannot be replayed (a field selector, a paged list, a read
// that failed) is opaque, and an opaque record never matches.
package readset
