package jobs

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// UnownedJobTTLSeconds is how long a finished Job without an owner
// reference (one of a deleting object) is kept if its object's cleanup
// did not delete it: long enough for any manager to have bookkept it, and
// for a paused object's cleanup to find its destroy.
const UnownedJobTTLSeconds int32 = 7 * 24 * 3600

// TerminationGracePeriodSeconds is the pod's grace after SIGTERM; the
// runner gets StopTimeout of it to stop the runtime and write its result.
const TerminationGracePeriodSeconds int64 = 600

// Build returns the Job of a run and its per-run Secret, or an error
// naming every problem of s. The Secret carries its name, labels and
// annotations but no data: the caller adds main.tf.json and
// terraform.tfvars.json. The caller creates the Job first and then the
// Secret, owned by the Job (OwnPerRunSecret), so that deleting the Job
// deletes it.
//
// Build refuses a policy that breaks the Pod Security rules
// (Policy.ValidateSecurity), for every operation. It does not check
// Policy.Validate: the manager does that before starting an apply, plan,
// refresh or drift, and never for destroy or restore.
func Build(s Spec) (*batchv1.Job, *corev1.Secret, error) {
	if err := s.validate(); err != nil {
		return nil, nil, fmt.Errorf("cannot build the %s Job of %s %s/%s: %w", s.Op, s.Kind, s.Namespace, s.ObjectName, err)
	}
	if s.StateSuffix == "" {
		suffix, err := state.Suffix(s.Namespace, s.Kind, s.ObjectName)
		if err != nil {
			return nil, nil, err
		}
		s.StateSuffix = suffix
	}
	if len(s.BackendLabels) == 0 {
		s.BackendLabels = state.OwnerLabels(s.Kind, s.ObjectName, s.ClusterName)
	}
	if s.RunNamespace != "" {
		s.RunnerEvents = false
	}
	labels := jobLabels(s)
	pod := podSpec(s)
	if s.CredentialsSecret != "" {
		WithCredentials(&pod, SourceContainer, s.CredentialsSecret)
	}
	addPlanKey(&pod, s.PlanKeySecret)

	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        s.Name,
			Namespace:   s.JobNamespace(),
			Labels:      labels,
			Annotations: jobAnnotations(s),
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To(s.Policy.ActiveDeadlineSeconds),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: copyMap(labels)},
				Spec:       pod,
			},
		},
	}
	if s.Unowned {
		// Nothing owns it: should the cleanup miss it, the TTL controller
		// takes it in the end.
		job.Spec.TTLSecondsAfterFinished = ptr.To(UnownedJobTTLSeconds)
	} else {
		job.OwnerReferences = []metav1.OwnerReference{ownerRef(s)}
	}
	return job, perRunSecret(s), nil
}

// jobLabels are the labels of the Job and its pod: operation, attempt,
// owner kind and name, cluster name (names hashed as in the state's
// labels), captf.io/managed, and the object's watch-filter label.
func jobLabels(s Spec) map[string]string {
	owner := state.OwnerLabels(s.Kind, s.ObjectName, s.ClusterName)
	labels := map[string]string{
		infrav1.OperationLabel:   string(s.Op),
		infrav1.AttemptLabel:     strconv.Itoa(s.Attempt),
		infrav1.OwnerKindLabel:   owner[state.LabelOwnerKind],
		infrav1.OwnerNameLabel:   owner[state.LabelOwnerName],
		infrav1.ClusterNameLabel: owner[state.LabelClusterName],
		infrav1.ManagedLabel:     "true",
	}
	if s.WatchFilter != "" {
		labels[infrav1.WatchFilterLabel] = s.WatchFilter
	}
	if s.RunNamespace != "" {
		labels[infrav1.OwnerNamespaceLabel] = s.Namespace
	}
	return labels
}

// jobAnnotations name the object the Job runs for (its UID and name),
// for an apply or plan the inputs hash, for a restore the backup's serial
// and inputs hash, and the run's marks.
func jobAnnotations(s Spec) map[string]string {
	ann := map[string]string{infrav1.OwnerUIDAnnotation: string(s.UID), infrav1.OwnerAnnotation: s.ObjectName}
	switch s.Op {
	case infrav1.OperationApply, infrav1.OperationPlan:
		if s.InputsHash != "" {
			ann[infrav1.InputsHashAnnotation] = s.InputsHash
		}
	case infrav1.OperationRestore:
		ann[infrav1.RestoreStateAnnotation] = strconv.FormatInt(s.Restore.Serial, 10)
		ann[infrav1.InputsHashAnnotation] = s.Restore.InputsHash
	}
	m := s.Marks
	if m.Exports != nil {
		ann[infrav1.AppliedClusterOutputsHashAnnotation] = m.Exports.Applied
		ann[infrav1.ApprovalHashAnnotation] = m.Exports.Approval
	}
	if m.ApprovedPlan != nil {
		ann[infrav1.ApprovedPlanAnnotation] = m.ApprovedPlan.PlanHash
		ann[infrav1.PlanAnnotation] = m.ApprovedPlan.Name
	}
	if len(m.Fallbacks) > 0 {
		ann[infrav1.ImageFallbacksAnnotation] = strings.Join(m.Fallbacks, ",")
	}
	if m.DriftRemediation {
		ann[infrav1.DriftRemediationAnnotation] = "true"
	}
	if m.AfterInterruptedApply != "" {
		ann[infrav1.AfterInterruptedApplyAnnotation] = m.AfterInterruptedApply
	}
	return ann
}

func ownerRef(s Spec) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         infrav1.GroupVersion.String(),
		Kind:               s.Kind,
		Name:               s.ObjectName,
		UID:                s.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// perRunSecret is the per-run Secret without data: the Job's inputs,
// written once and never changed.
func perRunSecret(s Spec) *corev1.Secret {
	ann := map[string]string{infrav1.ImageAnnotation: s.Image}
	if s.Identity != "" {
		ann[infrav1.IdentityAnnotation] = s.Identity
	}
	if s.IdentityKind == infrav1.IdentityKindSecret {
		ann[infrav1.IdentityKindAnnotation] = string(infrav1.IdentityKindSecret)
	}
	if s.InputsHash != "" {
		ann[infrav1.InputsHashAnnotation] = s.InputsHash
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        PerRunSecretName(s.Name),
			Namespace:   s.JobNamespace(),
			Labels:      map[string]string{infrav1.ManagedLabel: "true"},
			Annotations: ann,
		},
		Type: corev1.SecretTypeOpaque,
	}
}

// OwnPerRunSecret makes job the only owner of its per-run Secret, once the
// Job exists (it needs the Job's UID). Deleting the Job then deletes the
// Secret; a Secret left by an older Job of the same name is told apart by
// the owner's UID.
func OwnPerRunSecret(secret *corev1.Secret, job *batchv1.Job) error {
	if job.UID == "" {
		return fmt.Errorf("the Job %s has no UID yet: create it before its per-run Secret", job.Name)
	}
	if secret.Name != PerRunSecretName(job.Name) || secret.Namespace != job.Namespace {
		return fmt.Errorf("the Secret %s/%s is not the per-run Secret of Job %s/%s", secret.Namespace, secret.Name, job.Namespace, job.Name)
	}
	secret.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: batchv1.SchemeGroupVersion.String(),
		Kind:       "Job",
		Name:       job.Name,
		UID:        job.UID,
		Controller: ptr.To(true),
	}}
	return nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
