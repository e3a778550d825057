// Package protection owns the finalizer captf.io/state-protection, which
// keeps every Secret a destroy needs (state chunks, state backups, the
// attempt and applied inputs records, the plan key and the credentials
// mirror) until CAPTF's own cleanup lets it go.
//
// Owner references stay on those Secrets (clusterctl move follows them),
// so the garbage collector deletes them as soon as their owner is
// deleted with foreground propagation, and a namespace deletion deletes
// them too. The finalizer turns both into a mark: the Secret stays
// readable and writable until cleanup, after a successful destroy (or on
// Retain), removes the finalizer.
//
// The package holds no client state: it marks objects before CAPTF
// writes them and releases them with the client it is given, one by one
// (Delete, DeleteEach: CAPTF never deletes a collection).
package protection
