package runnerrbac

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/apierr"
	"captf.io/captf/internal/jobs"
)

// ClusterRole is the static ClusterRole the per-namespace RoleBinding
// grants the runner's ServiceAccounts; the RoleBinding has its name too.
const ClusterRole = "captf-runner"

// roleRef is the only roleRef a RoleBinding CAPTF manages may have.
var roleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRole}

// Ensure makes sure the runner ServiceAccount sa may run in ns: the
// default ServiceAccount captf-runner is created; a custom one must exist
// and carry captf.io/runner=true (one that lost the label is unbound at
// once). The RoleBinding captf-runner binds it to the ClusterRole
// captf-runner, and is recreated if its roleRef was changed; a RoleBinding
// of that name CAPTF does not manage is never modified.
func Ensure(ctx context.Context, c client.Client, ns, sa string) (metav1.Condition, error) {
	cond := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: infrav1.RunnerRBACReadyCondition, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	account := &corev1.ServiceAccount{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: sa}, account)
	switch {
	case apierrors.IsNotFound(err) && sa == jobs.DefaultServiceAccountName:
		account = &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa, Labels: map[string]string{infrav1.ManagedLabel: "true"}}}
		if err := c.Create(ctx, account); err != nil && !apierrors.IsAlreadyExists(err) {
			return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not create ServiceAccount %s: %s", sa, apierr.Reason(err)), err
		}
	case apierrors.IsNotFound(err):
		return cond(metav1.ConditionFalse, infrav1.ServiceAccountNotOptedInReason,
			"ServiceAccount %s named by spec.jobs.serviceAccountName does not exist; create it with the label %s=true", sa, infrav1.RunnerLabel), nil
	case err != nil:
		return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not read ServiceAccount %s: %s", sa, apierr.Reason(err)), err
	case sa != jobs.DefaultServiceAccountName && account.Labels[infrav1.RunnerLabel] != "true":
		if err := unbind(ctx, c, ns, sa); err != nil {
			return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not update RoleBinding %s: %s", ClusterRole, apierr.Reason(err)), err
		}
		return cond(metav1.ConditionFalse, infrav1.ServiceAccountNotOptedInReason,
			"ServiceAccount %s is not labelled %s=true; label it to let CAPTF Jobs run as it", sa, infrav1.RunnerLabel), nil
	}
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}
	rb := &rbacv1.RoleBinding{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ClusterRole}, rb)
	switch {
	case err == nil && rb.Labels[infrav1.ManagedLabel] != "true":
		return cond(metav1.ConditionFalse, infrav1.RBACFailedReason,
			"RoleBinding %s exists but is not managed by CAPTF (no %s=true label); CAPTF never modifies it: delete it or label it", ClusterRole, infrav1.ManagedLabel), nil
	case err == nil && rb.RoleRef != roleRef:
		// A roleRef cannot change in place: the binding is made again,
		// with the namespace's ServiceAccounts it had (never a user, a
		// group or another namespace's account: what the runner role
		// grants, CAPTF grants to its runners only).
		if err := c.Delete(ctx, rb, client.Preconditions{UID: &rb.UID}); err != nil && !apierrors.IsNotFound(err) {
			return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not replace RoleBinding %s bound to %s %s: %s", ClusterRole, rb.RoleRef.Kind, rb.RoleRef.Name, apierr.Reason(err)), err
		}
		var kept []rbacv1.Subject
		for _, s := range withoutSubject(rb.Subjects, subject) {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == ns {
				kept = append(kept, s)
			}
		}
		err = create(ctx, c, ns, append(kept, subject))
	case apierrors.IsNotFound(err):
		err = create(ctx, c, ns, []rbacv1.Subject{subject})
	case err != nil:
		return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not read RoleBinding %s: %s", ClusterRole, apierr.Reason(err)), err
	case !hasSubject(rb.Subjects, subject):
		patch := client.MergeFrom(rb.DeepCopy())
		rb.Subjects = append(rb.Subjects, subject)
		err = c.Patch(ctx, rb, patch)
	}
	if err != nil {
		return cond(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not write RoleBinding %s: %s", ClusterRole, apierr.Reason(err)), err
	}
	return cond(metav1.ConditionTrue, infrav1.RBACReadyReason, "Jobs run as ServiceAccount %s, bound to ClusterRole %s", sa, ClusterRole), nil
}

func create(ctx context.Context, c client.Client, ns string, subjects []rbacv1.Subject) error {
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ClusterRole, Labels: map[string]string{infrav1.ManagedLabel: "true"}},
		RoleRef:    roleRef,
		Subjects:   subjects,
	}
	err := c.Create(ctx, rb)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	// Another pass created it first, perhaps for another account, and the
	// cache may not show it yet: add this pass's account without reading
	// it (a subject listed twice grants nothing more), provided CAPTF
	// manages it.
	managed := "/metadata/labels/" + strings.ReplaceAll(infrav1.ManagedLabel, "/", "~1")
	add, err := json.Marshal([]map[string]any{
		{"op": "test", "path": managed, "value": "true"},
		{"op": "add", "path": "/subjects/-", "value": subjects[len(subjects)-1]},
	})
	if err != nil {
		return err
	}
	return c.Patch(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ClusterRole}}, client.RawPatch(types.JSONPatchType, add))
}

// unbind removes the ServiceAccount sa of ns from the managed RoleBinding.
func unbind(ctx context.Context, c client.Client, ns, sa string) error {
	rb := &rbacv1.RoleBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ClusterRole}, rb); err != nil {
		return client.IgnoreNotFound(err)
	}
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}
	if rb.Labels[infrav1.ManagedLabel] != "true" || !hasSubject(rb.Subjects, subject) {
		return nil
	}
	return setSubjects(ctx, c, rb, withoutSubject(rb.Subjects, subject))
}

// setSubjects writes subjects to rb, conditional on the version read.
func setSubjects(ctx context.Context, c client.Client, rb *rbacv1.RoleBinding, subjects []rbacv1.Subject) error {
	patch := client.MergeFromWithOptions(rb.DeepCopy(), client.MergeFromWithOptimisticLock{})
	rb.Subjects = subjects
	return client.IgnoreNotFound(c.Patch(ctx, rb, patch))
}

func hasSubject(subjects []rbacv1.Subject, s rbacv1.Subject) bool {
	for _, x := range subjects {
		if x.Kind == s.Kind && x.Name == s.Name && x.Namespace == s.Namespace {
			return true
		}
	}
	return false
}

func withoutSubject(subjects []rbacv1.Subject, s rbacv1.Subject) []rbacv1.Subject {
	out := make([]rbacv1.Subject, 0, len(subjects))
	for _, x := range subjects {
		if x.Kind != s.Kind || x.Name != s.Name || x.Namespace != s.Namespace {
			out = append(out, x)
		}
	}
	return out
}
