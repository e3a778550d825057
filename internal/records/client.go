package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/protection"
)

// ErrRetained is returned when a write finds a record kept by
// deletionPolicy Retain (label captf.io/retained-from-uid): it belongs to a
// deleted object until spec.adoptRetainedState adopts it, and is never
// overwritten before.
var ErrRetained = errors.New("the inputs record is retained from a deleted object")

// WriteAttempt writes rec as the attempt record of obj (kind is obj's API
// Kind), creating or updating it. The manager calls it right before an
// apply Job is created (or when a running one is adopted). An update
// replaces the files and the annotations the record owns, except
// captf.io/applied, which stays once set; annotations others wrote stay.
// The current record is read through reader (uncached).
//
// A record holding the evidence of a possible partial apply of another Job
// (captf.io/may-have-applied) is left alone: a new attempt has applied
// nothing yet, and its create may be refused or it may fail before its
// apply step, so overwriting would lose the inputs a destroy must render.
// The new Job's inputs stay in its per-run Secret until its outcome is
// known (MarkMayHaveAppliedWith, ConfirmApplied).
func WriteAttempt(ctx context.Context, c client.Client, reader client.Reader, obj metav1.Object, kind string, rec Record) error {
	desired, err := Secret(obj.GetNamespace(), OwnerReference(obj, kind), rec, false)
	if err != nil {
		return err
	}
	log := ctrl.LoggerFrom(ctx)
	keep := func(existing *corev1.Secret) bool {
		if held := evidenceOf(existing); held != "" && held != rec.Job {
			log.Info("Keeping the attempt record: it holds the inputs of a Job that may have applied", "secret", klog.KObj(existing), "mayHaveApplied", held, "job", rec.Job)
			return true
		}
		return false
	}
	log.Info("Writing attempt record", "secret", klog.KObj(desired), "job", rec.Job)
	_, err = write(ctx, c, reader, desired, false, keep)
	return err
}

// write creates desired, or merges it into the Secret of its name unless
// keep (when set) says to leave the existing Secret alone. It reports
// whether it wrote.
func write(ctx context.Context, c client.Client, reader client.Reader, desired *corev1.Secret, applied bool, keep func(*corev1.Secret) bool) (bool, error) {
	retriable := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	var wrote bool
	err := retry.OnError(retry.DefaultRetry, retriable, func() error {
		wrote = false
		existing := &corev1.Secret{}
		err := reader.Get(ctx, client.ObjectKeyFromObject(desired), existing)
		if apierrors.IsNotFound(err) {
			if err := c.Create(ctx, desired.DeepCopy()); err != nil {
				return fmt.Errorf("creating inputs record %s/%s: %w", desired.Namespace, desired.Name, err)
			}
			wrote = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading inputs record %s/%s: %w", desired.Namespace, desired.Name, err)
		}
		if uid, ok := existing.Labels[infrav1.RetainedFromUIDLabel]; ok {
			return fmt.Errorf("%w %s: %s/%s is kept for it; set spec.adoptRetainedState to adopt it", ErrRetained, uid, desired.Namespace, desired.Name)
		}
		if keep != nil && keep(existing) {
			return nil
		}
		if !merge(existing, desired, applied) {
			return nil
		}
		if err := c.Update(ctx, existing); err != nil {
			return fmt.Errorf("updating inputs record %s/%s: %w", desired.Namespace, desired.Name, err)
		}
		wrote = true
		return nil
	})
	return wrote, err
}

// Load reads both records of an object through reader (uncached); a record
// that does not exist is nil.
func Load(ctx context.Context, reader client.Reader, namespace, kind, name string) (attempt, applied *Record, err error) {
	if AttemptName(kind, name) == "" {
		return nil, nil, fmt.Errorf("kind %q has no inputs record", kind)
	}
	if attempt, err = get(ctx, reader, namespace, AttemptName(kind, name)); err != nil {
		return nil, nil, err
	}
	if applied, err = get(ctx, reader, namespace, AppliedName(kind, name)); err != nil {
		return nil, nil, err
	}
	return attempt, applied, nil
}

func get(ctx context.Context, reader client.Reader, namespace, name string) (*Record, error) {
	s := &corev1.Secret{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading inputs record %s/%s: %w", namespace, name, err)
	}
	rec := FromSecret(s)
	return &rec, nil
}

// Delete deletes both records of an object, the cleanup after a successful
// destroy (or a deletion with nothing to destroy): each is read through
// reader (uncached), released from its protection and deleted. A record
// already gone is not an error.
func Delete(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name string) error {
	if AttemptName(kind, name) == "" {
		return fmt.Errorf("kind %q has no inputs record", kind)
	}
	for _, n := range []string{AttemptName(kind, name), AppliedName(kind, name)} {
		s := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: n}, s); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading inputs record %s/%s: %w", namespace, n, err)
		}
		ctrl.LoggerFrom(ctx).Info("Deleting inputs record", "secret", klog.KObj(s))
		if err := protection.Delete(ctx, c, s); err != nil {
			return fmt.Errorf("deleting inputs record %s/%s: %w", namespace, n, err)
		}
	}
	return nil
}

// MarkAppliedExports records on a pool's attempt record the cluster exports
// its newest successful apply rendered. It reports whether the record
// exists.
func MarkAppliedExports(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name, hash string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		if s.Annotations[infrav1.AppliedClusterOutputsHashAnnotation] != hash {
			delete(s.Annotations, infrav1.PendingClusterOutputsAnnotation) // the held change is applied
		}
		s.Annotations[infrav1.AppliedClusterOutputsHashAnnotation] = hash
		delete(s.Annotations, infrav1.PartialClusterOutputsAnnotation) // an apply succeeded
		return true
	})
}

// MarkPartialExports records on a pool's attempt record that apply Job
// job, which rendered other cluster exports than the pool's last
// successful apply, failed after it started or vanished: its members may
// render either exports. Nothing is recorded when the record holds
// another Job's inputs, no applied exports are recorded (a first apply
// changes no exports), or the Job rendered the applied ones. It reports
// whether the record exists.
func MarkPartialExports(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name, job string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		exports := inputs.ExportsHash(s.Data[TfvarsFile])
		applied := s.Annotations[infrav1.AppliedClusterOutputsHashAnnotation]
		if s.Annotations[infrav1.JobAnnotation] != job || exports == "" || applied == "" || exports == applied {
			return true // not an exports change of that Job (nothing applied yet: no change either)
		}
		doc, _ := json.Marshal(map[string]string{"job": job, "exportsHash": exports, "appliedExportsHash": applied})
		s.Annotations[infrav1.PartialClusterOutputsAnnotation] = string(doc)
		return true
	})
}

// SetPendingExports writes captf.io/pending-cluster-outputs (doc, JSON)
// or removes it (doc ""). It reports whether the record exists.
func SetPendingExports(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name, doc string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		if doc == "" {
			delete(s.Annotations, infrav1.PendingClusterOutputsAnnotation)
		} else {
			s.Annotations[infrav1.PendingClusterOutputsAnnotation] = doc
		}
		return true
	})
}

// MarkRescued records on the attempt record that the backend rejected the
// state of serial and the runner saved it as a backup set: no apply or
// destroy may run until it is restored (ClearRescued). It reports whether
// the record exists.
func MarkRescued(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name, serial string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		s.Annotations[infrav1.RescuedSerialAnnotation] = serial
		return true
	})
}

// ClearRescued removes captf.io/rescued-serial: a restore succeeded. It
// reports whether the record exists.
func ClearRescued(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		delete(s.Annotations, infrav1.RescuedSerialAnnotation)
		return true
	})
}

// MaxUnpullableImages bounds captf.io/unpullable-images.
const MaxUnpullableImages = 3

// AddUnpullableImage appends image to captf.io/unpullable-images (keeping
// the newest MaxUnpullableImages). It reports whether the record exists.
func AddUnpullableImage(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name, image string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		list := WithUnpullable(SplitList(s.Annotations[infrav1.UnpullableImagesAnnotation]), image)
		s.Annotations[infrav1.UnpullableImagesAnnotation] = strings.Join(list, ",")
		return true
	})
}

// WithUnpullable is the unpullable images list with image added (once),
// keeping the newest MaxUnpullableImages.
func WithUnpullable(list []string, image string) []string {
	if slices.Contains(list, image) {
		return list
	}
	list = append(slices.Clone(list), image)
	if len(list) > MaxUnpullableImages {
		list = list[len(list)-MaxUnpullableImages:]
	}
	return list
}

// ClearUnpullableImages removes captf.io/unpullable-images: a successful
// apply pinned an image again. It reports whether the record exists.
func ClearUnpullableImages(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		delete(s.Annotations, infrav1.UnpullableImagesAnnotation)
		return true
	})
}

// MarkApplied sets captf.io/applied: "true" on the attempt record: the
// object applied (a successful apply, or a state carrying an inputs hash
// was read). Only deleting the Secret removes it. It reports whether the
// record exists.
func MarkApplied(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name string) (bool, error) {
	return annotateAttempt(ctx, c, reader, namespace, kind, name, func(s *corev1.Secret) bool {
		s.Annotations[infrav1.AppliedAnnotation] = "true"
		return true
	})
}

// annotateAttempt applies change to the attempt record and writes it when
// an annotation changed. change returns false to leave the record alone;
// the result is false then, and when the record does not exist.
func annotateAttempt(ctx context.Context, c client.Client, reader client.Reader, namespace, kind, name string, change func(*corev1.Secret) bool) (bool, error) {
	key := client.ObjectKey{Namespace: namespace, Name: AttemptName(kind, name)}
	if key.Name == "" {
		return false, fmt.Errorf("kind %q has no inputs record", kind)
	}
	var done bool
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &corev1.Secret{}
		err := reader.Get(ctx, key, s)
		if apierrors.IsNotFound(err) {
			done = false
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading inputs record %s: %w", key, err)
		}
		if uid, ok := s.Labels[infrav1.RetainedFromUIDLabel]; ok {
			return fmt.Errorf("%w %s: %s is kept for it; set spec.adoptRetainedState to adopt it", ErrRetained, uid, key)
		}
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		before := s.DeepCopy()
		if done = change(s); !done || equalSecrets(before, s) {
			return nil
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Updating annotations of attempt record", "secret", klog.KObj(s))
		if err := c.Update(ctx, s); err != nil {
			return fmt.Errorf("updating inputs record %s: %w", key, err)
		}
		return nil
	})
	return done, err
}
