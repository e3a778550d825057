package runs

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/apierr"
	"captf.io/captf/internal/jobs"
)

// Keeper writes an object's Jobs and per-run Secrets.
type Keeper struct {
	// Client writes Jobs and Secrets and lists Jobs (cached).
	Client client.Client
	// Reader reads Jobs, Secrets and the objects live.
	Reader client.Reader
}

// ErrPerRunSecret marks the error of a per-run Secret's creation, made
// after its Job's: the Job exists, and its pod cannot start without the
// Secret.
var ErrPerRunSecret = errors.New("creating the per-run Secret")

// Create creates job, or adopts the Job of its name, then its per-run
// Secret owned by it; a Secret an older Job of the name left is replaced.
// created: this call created the Job. An error of the Secret's creation is
// marked ErrPerRunSecret.
func (k Keeper) Create(ctx context.Context, job *batchv1.Job, secret *corev1.Secret) (created bool, err error) {
	if err := k.Client.Create(ctx, job); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return false, err
		}
		if err := k.Reader.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
	} else {
		created = true
	}
	if err := jobs.OwnPerRunSecret(secret, job); err != nil {
		return created, err
	}
	err = k.Client.Create(ctx, secret)
	if !apierrors.IsAlreadyExists(err) {
		return created, perRunErr(err)
	}
	existing := &corev1.Secret{}
	if err := k.Reader.Get(ctx, client.ObjectKeyFromObject(secret), existing); err != nil {
		return created, err
	}
	if metav1.IsControlledBy(existing, job) {
		return created, nil
	}
	if err := k.Client.Delete(ctx, existing, client.Preconditions{UID: &existing.UID}); err != nil && !apierrors.IsNotFound(err) {
		return created, err
	}
	return created, perRunErr(k.Client.Create(ctx, secret))
}

// perRunErr marks err (nil stays nil) as the per-run Secret's.
func perRunErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrPerRunSecret, err)
}

// Delete deletes j with its pods (background propagation); a Job already
// gone is not an error.
func (k Keeper) Delete(ctx context.Context, j *batchv1.Job) error {
	return client.IgnoreNotFound(k.Client.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)))
}

// DeletePerRunSecret deletes the per-run Secret of j, once j is bookkept.
func (k Keeper) DeletePerRunSecret(ctx context.Context, j *batchv1.Job) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: jobs.PerRunSecretName(j.Name)}}
	if err := k.Client.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the per-run Secret of Job %s: %w", j.Name, err)
	}
	return nil
}

// Stop stops j, whose image cannot be pulled (runner: the runner's own
// image), through its deadline: it fails, stays in the history and counts
// toward the backoff, and its annotations tell bookkeeping why.
func (k Keeper) Stop(ctx context.Context, j *batchv1.Job, runner bool) error {
	patch := client.MergeFrom(j.DeepCopy())
	if j.Annotations == nil {
		j.Annotations = map[string]string{}
	}
	j.Annotations[infrav1.ImagePullFailedAnnotation] = "true"
	if runner {
		j.Annotations[infrav1.RunnerImagePullFailedAnnotation] = "true"
	}
	j.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
	return client.IgnoreNotFound(k.Client.Patch(ctx, j, patch))
}

// DeleteUnowned deletes, with their pods, the Jobs among list that ran
// without an owner reference (a deleting object's), once the object is
// released.
func (k Keeper) DeleteUnowned(ctx context.Context, list []batchv1.Job) error {
	for i := range list {
		j := &list[i]
		if metav1.GetControllerOf(j) != nil || !j.DeletionTimestamp.IsZero() {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Deleting a Job that ran without an owner reference", "job", j.Name)
		if err := k.Delete(ctx, j); err != nil {
			return fmt.Errorf("deleting Job %s: %w", j.Name, err)
		}
	}
	return nil
}

// Refused says whether err, of Create, is the API server refusing the run
// (the Job or its per-run Secret invalid, forbidden by a policy or a
// quota, too large: only a change makes it pass) rather than failing now,
// and why, naming the Job (and the per-run Secret, when it was the one
// refused: the Job exists then, and its pod cannot start).
func Refused(err error, job, secret string) (why string, refused bool) {
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err) && !apierrors.IsRequestEntityTooLargeError(err) {
		return "", false
	}
	if errors.Is(err, ErrPerRunSecret) {
		return fmt.Sprintf("Job %s cannot run: its per-run Secret %s was refused: %s", job, secret, apierr.Reason(err)), true
	}
	return fmt.Sprintf("Job %s could not be created: %s", job, apierr.Reason(err)), true
}
