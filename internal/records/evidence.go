package records

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
)

// The evidence of a possible partial apply is the attempt record carrying
// captf.io/may-have-applied: its captf.io/job names an apply Job that
// failed after its apply step may have run (or ended without a result, or
// vanished), and its files are the inputs that Job ran with. A destroy
// renders them (ForDestroy, row 1), so they must outlive everything that
// does not settle what that Job did:
//
//   - a later attempt write keeps them (WriteAttempt): the next Job has
//     applied nothing yet, and may never (its create refused, the manager
//     stopped before creating it, a failure before its apply step);
//   - a later Job that may have applied too takes them over with its own
//     inputs (MarkMayHaveAppliedWith): it ran against what the earlier
//     one left, so its inputs are the newer possibly-applied ones;
//   - a successful apply ends them (ConfirmApplied): the infrastructure
//     now matches its inputs, which the applied record holds;
//   - a successful restore or the user's captf.io/confirm-no-resources
//     ends them too (ClearUnconfirmedApply).
//
// Marks only move forward: a Job's outcome read late (the manager was
// down, the cache lagged) never replaces or clears the evidence of a Job
// that finished after it; the caller names those Jobs (newer).

// evidenceOf names the Job whose possible partial apply the attempt record
// holds ("" when it holds none).
func evidenceOf(s *corev1.Secret) string {
	if v, ok := s.Annotations[infrav1.MayHaveAppliedAnnotation]; !ok || v == "false" {
		return ""
	}
	return s.Annotations[infrav1.JobAnnotation]
}

// MarkMayHaveApplied sets captf.io/may-have-applied on the attempt record
// when it names job: an apply newly failed after its apply step may have
// run, or vanished. It reports whether the record now carries the mark; it
// is false, without error, when there is no attempt record or it names
// another Job.
func MarkMayHaveApplied(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name, job string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		if s.Annotations[infrav1.JobAnnotation] != job {
			return false
		}
		s.Annotations[infrav1.MayHaveAppliedAnnotation] = "true"
		return true
	})
}

// MarkMayHaveAppliedWith records that apply Job rec.Job may have changed
// resources with rec's inputs (its per-run Secret's, PerRunRecord):
//
//   - a record naming rec.Job is marked;
//   - a record holding the evidence of another Job that newer does not
//     name (an older Job) gets rec's files and annotations, marked: the
//     newer possible partial apply supersedes it;
//   - a record holding the evidence of a Job newer names, or naming
//     another Job without a mark (a newer attempt), is left alone;
//   - a missing record is created from rec.
//
// It reports whether the record now holds rec.Job's evidence.
func MarkMayHaveAppliedWith(ctx context.Context, c client.Client, reader client.Reader, obj metav1.Object, kind string, rec Record, newer []string) (bool, error) {
	rec.MayHaveApplied = true
	desired, err := Secret(obj.GetNamespace(), OwnerReference(obj, kind), rec, false)
	if err != nil {
		return false, err
	}
	holds := true // also when the record is missing: write creates it
	keep := func(existing *corev1.Secret) bool {
		held := evidenceOf(existing)
		holds = existing.Annotations[infrav1.JobAnnotation] == rec.Job || (held != "" && !slices.Contains(newer, held))
		return !holds
	}
	wrote, err := write(ctx, c, reader, desired, false, keep)
	if err != nil {
		return false, err
	}
	if wrote {
		ctrl.LoggerFrom(ctx).Info("Recorded the inputs of an apply that may have applied", "secret", klog.KObj(desired), "job", rec.Job)
	}
	return holds, nil
}

// ConfirmApplied records on the attempt record that the apply Job
// confirmed.Job succeeded: the evidence of a possible partial apply goes,
// unless it names a Job of newer (Jobs that finished after it), and
// captf.io/unconfirmed-apply goes when it names after, the unconfirmed
// apply the Job was started after ("" leaves it). When the record held an
// older Job's evidence, the confirmed Job's files (when confirmed carries
// them: its applied record) take their place, so that the record names the
// newest apply again. It reports whether the record exists.
func ConfirmApplied(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name string, confirmed Record, after string, newer []string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		if held := evidenceOf(s); held != "" && !slices.Contains(newer, held) {
			delete(s.Annotations, infrav1.MayHaveAppliedAnnotation)
			if held != confirmed.Job && confirmed.MainTF != nil {
				confirmed.MayHaveApplied, confirmed.Applied = false, false
				for _, k := range attemptKeys {
					if k != infrav1.AppliedAnnotation {
						delete(s.Annotations, k)
					}
				}
				for k, v := range annotations(confirmed, false) {
					s.Annotations[k] = v
				}
				s.Data = map[string][]byte{MainFile: confirmed.MainTF, TfvarsFile: confirmed.Tfvars}
			}
		}
		if after != "" && s.Annotations[infrav1.UnconfirmedApplyAnnotation] == after {
			delete(s.Annotations, infrav1.UnconfirmedApplyAnnotation)
		}
		return true
	})
}

// ClearMayHaveApplied removes captf.io/may-have-applied from the attempt
// record (a successful restore newer than the newest apply). It reports
// whether the record exists.
func ClearMayHaveApplied(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		delete(s.Annotations, infrav1.MayHaveAppliedAnnotation)
		return true
	})
}

// MarkUnconfirmedApply records that the apply Job job ended without a
// result after its runner started, or vanished: captf.io/unconfirmed-apply
// names it and, when the record holds its inputs, captf.io/may-have-applied
// is set, so that the next destroy renders them. It reports whether the
// record exists.
func MarkUnconfirmedApply(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name, job string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		s.Annotations[infrav1.UnconfirmedApplyAnnotation] = job
		if s.Annotations[infrav1.JobAnnotation] == job {
			s.Annotations[infrav1.MayHaveAppliedAnnotation] = "true"
		}
		return true
	})
}

// ClearUnconfirmedApply removes captf.io/unconfirmed-apply and
// captf.io/may-have-applied: a successful restore, or the user confirmed
// that the Job created nothing, settled what it did. It reports whether
// the record exists.
func ClearUnconfirmedApply(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		delete(s.Annotations, infrav1.UnconfirmedApplyAnnotation)
		delete(s.Annotations, infrav1.MayHaveAppliedAnnotation)
		return true
	})
}

// MarkJobMayHaveApplied records that apply Job job of obj may have
// changed resources. The attempt record may still hold an earlier Job's
// evidence (WriteAttempt keeps it), so job's inputs come from its per-run
// Secret in obj's namespace, which is deleted only after bookkeeping
// (MarkMayHaveAppliedWith, newer as there); when that is gone too (the
// Job vanished with it), or holds no files, only a record naming job is
// marked (MarkMayHaveApplied).
func MarkJobMayHaveApplied(ctx context.Context, c client.Client, reader client.Reader, obj metav1.Object, kind, job string, newer []string) error {
	ns := obj.GetNamespace()
	perRun := &corev1.Secret{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobs.PerRunSecretName(job)}, perRun)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the per-run Secret of Job %s: %w", job, err)
	}
	if err == nil {
		rec, ok, err := PerRunRecord(perRun, ns, job)
		if err != nil {
			return err
		}
		if ok {
			if _, err := MarkMayHaveAppliedWith(ctx, c, reader, obj, kind, rec, newer); err != nil {
				return fmt.Errorf("marking the inputs of Job %s as possibly applied: %w", job, err)
			}
			return nil
		}
	}
	if _, err := MarkMayHaveApplied(ctx, c, reader, ns, kind, obj.GetName(), job); err != nil {
		return fmt.Errorf("marking the inputs of Job %s as possibly applied: %w", job, err)
	}
	return nil
}

// MarkPossiblyApplied records that apply Job job of obj may have changed
// resources (MarkJobMayHaveApplied; newer as there), then, when its
// outcome is unknown (unconfirmed), names it the unconfirmed apply, and,
// for a pool that guards its exports (exports), that the exports change
// it rendered may be partly applied (MarkPartialExports).
func MarkPossiblyApplied(ctx context.Context, c client.Client, reader client.Reader, obj metav1.Object, kind, job string, newer []string, unconfirmed, exports bool) error {
	if err := MarkJobMayHaveApplied(ctx, c, reader, obj, kind, job, newer); err != nil {
		return err
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	if unconfirmed {
		if _, err := MarkUnconfirmedApply(ctx, c, reader, ns, kind, name, job); err != nil {
			return fmt.Errorf("recording the unconfirmed apply of Job %s: %w", job, err)
		}
		ctrl.LoggerFrom(ctx).Info("Recorded an apply whose outcome is unknown", "job", job)
	}
	if exports {
		if _, err := MarkPartialExports(ctx, c, reader, ns, kind, name, job); err != nil {
			return fmt.Errorf("recording the partly applied exports change of Job %s: %w", job, err)
		}
	}
	return nil
}
