// Package runs owns the writes of a module run's objects on the API
// server, which internal/jobs builds and reads without writing: creating
// a Job and then its per-run Secret owned by it (adopting a Job of the
// same name, replacing a Secret an older Job of that name left), stopping
// a Job through its deadline, deleting a Job with its pods, deleting a
// per-run Secret once its Job is bookkept, and sweeping the Jobs a gone
// object left without an owner reference; and which create errors are a
// refusal only a change makes pass (Refused). The engine decides when each
// happens and what it says of it; nothing here emits events or sets
// conditions.
package runs
