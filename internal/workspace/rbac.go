package workspace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
)

// RunnerClusterRole is the static ClusterRole the per-namespace
// RoleBinding grants the runner's ServiceAccounts.
const RunnerClusterRole = "captf-runner"

// runnerRBAC makes sure the runner ServiceAccount sa may run in ns: the
// default ServiceAccount captf-runner is created; a custom one must exist
// and carry captf.io/runner=true. The RoleBinding captf-runner binds it to
// the ClusterRole captf-runner; a RoleBinding of that name CAPTF does not
// manage is never modified.
func (e *Engine) runnerRBAC(ctx context.Context, ns, sa string) (metav1.Condition, error) {
	cond := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: infrav1.RunnerRBACReadyCondition, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	account := &corev1.ServiceAccount{}
	err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: sa}, account)
	switch {
	case apierrors.IsNotFound(err) && sa == jobs.DefaultServiceAccountName:
		account = &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa, Labels: map[string]string{infrav1.ManagedLabel: "true"}}}
		if err := e.Client.Create(ctx, account); err != nil && !apierrors.IsAlreadyExists(err) {
			return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not create ServiceAccount %s: %s", sa, apiReason(err)), err
		}
	case apierrors.IsNotFound(err):
		return cond(metav1.ConditionFalse, infrav1.ServiceAccountNotOptedInReason,
			"ServiceAccount %s named by spec.jobs.serviceAccountName does not exist; create it with the label %s=true", sa, infrav1.RunnerLabel), nil
	case err != nil:
		return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not read ServiceAccount %s: %s", sa, apiReason(err)), err
	case sa != jobs.DefaultServiceAccountName && account.Labels[infrav1.RunnerLabel] != "true":
		return cond(metav1.ConditionFalse, infrav1.ServiceAccountNotOptedInReason,
			"ServiceAccount %s is not labelled %s=true; label it to let CAPTF Jobs run as it", sa, infrav1.RunnerLabel), nil
	}
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}
	rb := &rbacv1.RoleBinding{}
	err = e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: RunnerClusterRole}, rb)
	switch {
	case apierrors.IsNotFound(err):
		rb = &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: RunnerClusterRole, Labels: map[string]string{infrav1.ManagedLabel: "true"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: RunnerClusterRole},
			Subjects:   []rbacv1.Subject{subject},
		}
		if err := e.Client.Create(ctx, rb); err != nil && !apierrors.IsAlreadyExists(err) {
			return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not create RoleBinding %s: %s", RunnerClusterRole, apiReason(err)), err
		}
	case err != nil:
		return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not read RoleBinding %s: %s", RunnerClusterRole, apiReason(err)), err
	case rb.Labels[infrav1.ManagedLabel] != "true":
		return cond(metav1.ConditionFalse, infrav1.RBACFailedReason,
			"RoleBinding %s exists but is not managed by CAPTF (no %s=true label); CAPTF never modifies it: delete it or label it", RunnerClusterRole, infrav1.ManagedLabel), nil
	default:
		has := false
		for _, s := range rb.Subjects {
			has = has || (s.Kind == subject.Kind && s.Name == subject.Name && s.Namespace == subject.Namespace)
		}
		if !has {
			patch := client.MergeFrom(rb.DeepCopy())
			rb.Subjects = append(rb.Subjects, subject)
			if err := e.Client.Patch(ctx, rb, patch); err != nil {
				return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not update RoleBinding %s: %s", RunnerClusterRole, apiReason(err)), err
			}
		}
	}
	return cond(metav1.ConditionTrue, infrav1.RBACReadyReason, "Jobs run as ServiceAccount %s, bound to ClusterRole %s", sa, RunnerClusterRole), nil
}

// apiReason names an API error by its reason, never by a message that
// could carry request content.
func apiReason(err error) string {
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		return string(r)
	}
	return "request failed"
}
