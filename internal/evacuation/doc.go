// Package evacuation owns where a deleting object's destroy runs when the
// object's own namespace is being deleted: Kubernetes refuses every new
// Job, pod, Secret and Lease in a terminating namespace, but still lets
// the manager read and update what is left there (the state and records
// Secrets, kept by their finalizer). The destroy then runs in the
// object's evacuation namespace, captf-evac-<object UID> (Name), which
// this package creates (Ensure), fills (CopySecret, SyncState), and
// deletes with the object (Remove).
//
// The object's namespace stays the state's home: the state is copied into
// the evacuation namespace before each of its Jobs (SyncState, growing)
// and copied back once the Job has finished (SyncState, never creating a
// piece, which a terminating namespace refuses), before anything reads
// it. An evacuation namespace holds one object's Jobs, state and
// credentials only, so a module running there sees nothing of another
// object, another tenant or the manager.
package evacuation
