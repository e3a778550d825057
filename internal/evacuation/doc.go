// Package evacuation owns where a deleting object's destroy runs when the
// object's own namespace is being deleted: Kubernetes refuses every new
// Job, pod, Secret and Lease in a terminating namespace, but still lets
// the manager read and update what is left there (the state and records
// Secrets, kept by their finalizer). The destroy then runs in the
// object's evacuation namespace, captf-evac-<random>, which this package
// creates and records on the object (Ensure, Find), fills (CopySecrets,
// CopyIn, Evacuate), empties (CopyBack, Release, Abandon) and deletes with
// the object (Remove). No evacuated Job starts while a pod of the object
// still runs in its own namespace (HomePodRuns). Only the namespace of the
// recorded name and UID is ever used or deleted: nobody can make it in
// advance.
//
// The object's namespace stays the state's home: the state is copied into
// the evacuation namespace before each of its Jobs (CopyIn, the copies
// kept by the state protection) and copied back once the Job has finished
// (CopyBack, never creating a piece, which a terminating namespace
// refuses, and never from a copy that lost its base Secret), before
// anything reads it. An evacuation namespace holds one object's Jobs,
// state and credentials only, so a module running there sees nothing of
// another object, another tenant or the manager.
package evacuation
