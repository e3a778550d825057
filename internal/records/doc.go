// Package records owns the input records of a workload object: two Secrets
// in the object's namespace that remember what its apply Jobs ran with, so
// that a destroy (and the refresh or drift of a kind whose inputs are never
// re-rendered) renders the inputs that built the infrastructure rather than
// the object's current ones.
//
//   - The attempt record captf-inputs-<kindshort>-<name> holds the files of
//     the newest apply Job the manager created, written right before the
//     Job is created (WriteAttempt), and marked when the object is known
//     to have applied (MarkApplied). While it carries the evidence of a
//     possible partial apply (MarkMayHaveApplied, MarkMayHaveAppliedWith;
//     MarkJobMayHaveApplied picks one for a Job, MarkPossiblyApplied adds
//     the unknown outcome and a pool's partly applied exports) it holds that Job's
//     files instead, until an apply is confirmed
//     (ConfirmApplied) or a restore or the user settles it
//     (ClearUnconfirmedApply); evidence.go says why.
//   - The applied record captf-applied-<kindshort>-<name> holds the files
//     of the newest successful apply and the image digest it ran. The
//     bookkeeping of a successful apply copies the Job's per-run Secret into
//     it (Promote; FinishApply does all the records' part of that
//     bookkeeping).
//
// Both carry exactly the keys main.tf.json and terraform.tfvars.json, the
// labels captf.io/managed and owner kind and name (never the clusterctl
// move label: clusterctl moves them by their owner reference) and one
// non-controller owner reference to the object. Load reads both, Delete
// removes both (cleanup), ForDestroy is the pure rule that picks which
// record a destroy renders, and Rendered the one that picks what a
// destroy, refresh or drift renders (a mutable kind's current inputs, or
// that record). docs/reference/records.md describes them.
//
// Reads go through the client.Reader the caller passes (the manager's
// uncached API reader): the manager caches only the metadata of the Secrets
// it manages. The files hold bootstrap data and Secret-sourced variables in
// clear: nothing here logs them or puts them into an error.
package records
