package records

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
)

// PromoteOutcome says what Promote did.
type PromoteOutcome string

const (
	// Promoted: the applied record now holds the per-run Secret's files.
	Promoted PromoteOutcome = "Promoted"
	// PromotedFromAttempt: the per-run Secret was gone; the attempt record
	// named the Job and its files were promoted.
	PromotedFromAttempt PromoteOutcome = "PromotedFromAttempt"
	// AlreadyPromoted: the applied record already names the Job; nothing
	// was written.
	AlreadyPromoted PromoteOutcome = "AlreadyPromoted"
	// Superseded: the applied record names an apply that finished after the
	// Job (its outcome was read late); nothing was written, so the record
	// never goes back to older inputs.
	Superseded PromoteOutcome = "Superseded"
	// PromotionUnknown: neither the per-run Secret nor an attempt record
	// naming the Job is left, so the Job's inputs are unknown. The older
	// applied record is kept; the caller emits the Warning
	// AppliedInputsUnknown.
	PromotionUnknown PromoteOutcome = "Unknown"
)

// Promotion is the result of Promote.
type Promotion struct {
	Outcome PromoteOutcome
	// Record is the applied record after the call (nil when there is none).
	Record *Record
	// Previous is the applied record before the call (nil when there was
	// none): a digest differing from Previous's is newly pinned.
	Previous *Record
}

// Promote records the inputs of jobName, an apply Job of obj that newly
// succeeded, as obj's applied record. The bookkeeping calls it before it
// deletes the per-run Secret; perRun is that Secret as read, nil when it
// is gone. digest is the image digest the Job's pod reported, "" when it
// reported none: the previous record's digest is then kept when the image
// is the same, and none is recorded otherwise.
//
// It is idempotent: an applied record already naming jobName is left
// alone. It never moves backwards: an applied record naming one of newer,
// the successful applies that finished after jobName, is left alone too
// (Superseded). Without perRun, the attempt record is promoted when it
// names jobName; otherwise nothing is written (PromotionUnknown).
func Promote(ctx context.Context, c client.Client, reader client.Reader, obj metav1.Object, kind, jobName string, perRun *corev1.Secret, digest string, newer []string) (Promotion, error) {
	attempt, previous, err := Load(ctx, reader, obj.GetNamespace(), kind, obj.GetName())
	if err != nil {
		return Promotion{}, err
	}
	res := Promotion{Previous: previous, Record: previous}
	switch {
	case previous != nil && previous.Job == jobName:
		res.Outcome = AlreadyPromoted
		return res, nil
	case previous != nil && slices.Contains(newer, previous.Job):
		res.Outcome = Superseded
		return res, nil
	}
	rec, outcome, err := promotedRecord(obj, jobName, perRun, attempt)
	if err != nil || outcome == PromotionUnknown {
		res.Outcome = outcome
		return res, err
	}
	rec.ImageDigest = digest
	if digest == "" && previous != nil && previous.Image == rec.Image {
		rec.ImageDigest = previous.ImageDigest
	}
	desired, err := Secret(obj.GetNamespace(), OwnerReference(obj, kind), rec, true)
	if err != nil {
		return Promotion{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Promoting inputs to the applied record", "secret", klog.KObj(desired), "job", jobName, "from", outcome)
	if _, err := write(ctx, c, reader, desired, true, nil); err != nil {
		return Promotion{}, err
	}
	rec.Name = desired.Name
	res.Outcome, res.Record = outcome, &rec
	return res, nil
}

// PerRunRecord is the record of the apply Job jobName read from its
// per-run Secret perRun (in the Job's namespace). ok is false when the
// Secret holds no files; an error says it is not that Job's per-run
// Secret.
func PerRunRecord(perRun *corev1.Secret, namespace, jobName string) (rec Record, ok bool, err error) {
	if perRun.Name != jobs.PerRunSecretName(jobName) || perRun.Namespace != namespace {
		return Record{}, false, fmt.Errorf("the Secret %s/%s is not the per-run Secret of Job %s/%s", perRun.Namespace, perRun.Name, namespace, jobName)
	}
	if _, ok := perRun.Data[MainFile]; !ok {
		return Record{}, false, nil
	}
	a := perRun.Annotations
	rec = Record{
		Job:        jobName,
		Image:      a[infrav1.ImageAnnotation],
		Identity:   a[infrav1.IdentityAnnotation],
		InputsHash: a[infrav1.InputsHashAnnotation],
		MainTF:     perRun.Data[MainFile],
		Tfvars:     perRun.Data[TfvarsFile],
	}
	if a[infrav1.IdentityKindAnnotation] == string(infrav1.IdentityKindSecret) {
		rec.IdentityKind = infrav1.IdentityKindSecret
	}
	return rec, true, nil
}

// promotedRecord is the record of jobName taken from its per-run Secret,
// else from the attempt record when it names the Job.
func promotedRecord(obj metav1.Object, jobName string, perRun *corev1.Secret, attempt *Record) (Record, PromoteOutcome, error) {
	if perRun != nil {
		rec, ok, err := PerRunRecord(perRun, obj.GetNamespace(), jobName)
		if err != nil {
			return Record{}, "", err
		}
		if ok {
			return rec, Promoted, nil
		}
	}
	if attempt != nil && attempt.Job == jobName {
		return Record{
			Job: jobName, Image: attempt.Image, Identity: attempt.Identity, IdentityKind: attempt.IdentityKind,
			InputsHash: attempt.InputsHash, MainTF: attempt.MainTF, Tfvars: attempt.Tfvars,
		}, PromotedFromAttempt, nil
	}
	return Record{}, PromotionUnknown, nil
}

// FinishApply is the records' part of the bookkeeping of job, an apply Job
// of obj (of kind) that succeeded, its pod having run digest: the files of
// its per-run Secret (read live) become the applied record (Promote, with
// newer, the successful applies that finished after it); the attempt
// record is marked applied and forgets its unpullable images; the cluster
// exports a pool's apply rendered are recorded, unless a newer apply's
// record is kept; and the unconfirmed apply it was started after is
// settled (ConfirmApplied, keeping the marks of after, the applies that
// finished after it). It returns the promotion, also when a step after it
// fails (none when it failed itself).
func FinishApply(ctx context.Context, c client.Client, reader client.Reader, obj metav1.Object, kind string, job *batchv1.Job, digest string, newer, after []string) (Promotion, error) {
	perRun := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: jobs.PerRunSecretName(job.Name)}, perRun); err != nil {
		if !apierrors.IsNotFound(err) {
			return Promotion{}, err
		}
		perRun = nil
	}
	prom, err := Promote(ctx, c, reader, obj, kind, job.Name, perRun, digest, newer)
	if err != nil {
		return Promotion{}, fmt.Errorf("promoting the inputs of Job %s: %w", job.Name, err)
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	if _, err := MarkApplied(ctx, c, reader, ns, kind, name); err != nil {
		return prom, err
	}
	if _, err := ClearUnpullableImages(ctx, c, reader, ns, kind, name); err != nil {
		return prom, err
	}
	if exports := job.Annotations[infrav1.AppliedClusterOutputsHashAnnotation]; exports != "" && prom.Outcome != Superseded {
		if _, err := MarkAppliedExports(ctx, c, reader, ns, kind, name, exports); err != nil {
			return prom, err
		}
	}
	// The unconfirmed apply this one was started after is settled; marks
	// of applies that finished after it stay.
	confirmed := Record{Job: job.Name}
	if prom.Record != nil && prom.Record.Job == job.Name {
		confirmed = *prom.Record
	}
	_, err = ConfirmApplied(ctx, c, reader, ns, kind, name, confirmed, job.Annotations[infrav1.AfterInterruptedApplyAnnotation], after)
	return prom, err
}
