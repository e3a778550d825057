// Package jobs builds the Kubernetes objects of a module run (the Job, its
// pod and the per-run Secret) and reads them back (whether a Job finished,
// and an object's Jobs as a history). It is pure: builders take what was
// decided and return objects, readers take Jobs; nothing here talks to the
// API server.
//
// It owns:
//   - Job names (Name, Hash6, and the tick that tells runs of the same
//     inputs apart, Ticks.Tick) and per-run Secret names
//     (PerRunSecretName);
//   - the effective jobs policy of an object (MergePolicy), the check
//     behind the JobPolicyInvalid condition (Policy.Validate), and the
//     Secrets a pod reads under it (Policy.Secrets);
//   - the Job itself (Build from a Spec): labels, owner reference, the
//     runner init container, the module container with the runner's
//     arguments and environment, the volumes, the annotations the Job
//     carries for later passes (Marks, a restore's serial), and the
//     per-run Secret's metadata; the credentials delivery
//     (WithCredentials); the per-run Secret's ownership by its Job
//     (OwnPerRunSecret);
//   - the readers: Finished, the history of an object's Jobs (Op,
//     Attempt, FinishedBefore, ToBookkeep, AppliesAfter, NextAttempt,
//     Prunable, Summary for the decision table), and a finished Job's
//     outcome from its pods (OutcomeOf: the runner's result document,
//     package internal/runner/result; the failure summary, status.lastRun
//     and the image its report names), and what bookkeeping makes of it
//     before any write (Outcome.Verdict: the failure kind, the marks the
//     Job takes, a new health reading; whether a failed apply may have
//     applied, or is unconfirmed, and what that leaves on the attempt
//     record, Evidence; the labels the metrics give its end,
//     MetricLabels), and the bookkept mark with the marks it carries
//     (BookkeptMarks, Marked);
//   - the image of a Job that is not an apply (ChooseImage: the applied
//     digest, then the tag, then spec.source.image, skipping unpullable
//     ones), and what a running Job's pods say (PodsOf, Stuck, and Pull:
//     wait out the image-pull grace, fall back to the next image, or give
//     the Job up).
//
// The manager creates the Job, then the per-run Secret with its data and
// owned by the Job. docs/reference/jobs.md describes the result.
package jobs
