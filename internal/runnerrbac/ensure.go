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

// Binding is the runner's RBAC in a namespace as Check read it: the one
// write that lets the runner ServiceAccount run there (none when nothing
// is missing, or when no write of CAPTF's can help), and the
// RunnerRBACReady condition once that write is done.
type Binding struct {
	ns, sa string
	// account: the default ServiceAccount is created first.
	account bool
	write   write
	// rb is the RoleBinding as read (nil when none).
	rb   *rbacv1.RoleBinding
	cond metav1.Condition
}

// write is the write of the RoleBinding a Binding needs.
type write int

const (
	writeNone write = iota
	// writeUnbind takes a ServiceAccount that lost its opt-in label off
	// the RoleBinding.
	writeUnbind
	// writeReplace makes again a RoleBinding whose roleRef was changed.
	writeReplace
	// writeCreate creates the RoleBinding.
	writeCreate
	// writeSubject adds the ServiceAccount to the RoleBinding.
	writeSubject
)

// Check reads what the runner ServiceAccount sa needs to run in ns,
// writing nothing: the default ServiceAccount captf-runner is created by
// the write; a custom one must exist and carry captf.io/runner=true (one
// that lost the label is unbound). The RoleBinding captf-runner binds it
// to the ClusterRole captf-runner, and is made again if its roleRef was
// changed; a RoleBinding of that name CAPTF does not manage is never
// modified. A read that fails returns the condition that says so.
func Check(ctx context.Context, c client.Reader, ns, sa string) (Binding, error) {
	b := Binding{ns: ns, sa: sa}
	account := &corev1.ServiceAccount{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: sa}, account)
	switch {
	case apierrors.IsNotFound(err) && sa == jobs.DefaultServiceAccountName:
		b.account = true
	case apierrors.IsNotFound(err):
		return b.with(metav1.ConditionFalse, infrav1.ServiceAccountNotOptedInReason,
			"ServiceAccount %s named by spec.jobs.serviceAccountName does not exist; create it with the label %s=true", sa, infrav1.RunnerLabel), nil
	case err != nil:
		return b.with(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not read ServiceAccount %s: %s", sa, apierr.Reason(err)), err
	case sa != jobs.DefaultServiceAccountName && account.Labels[infrav1.RunnerLabel] != "true":
		b.write = writeUnbind
		return b.with(metav1.ConditionFalse, infrav1.ServiceAccountNotOptedInReason,
			"ServiceAccount %s is not labelled %s=true; label it to let CAPTF Jobs run as it", sa, infrav1.RunnerLabel), nil
	}
	rb := &rbacv1.RoleBinding{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ClusterRole}, rb)
	switch {
	case err == nil && rb.Labels[infrav1.ManagedLabel] != "true":
		return b.with(metav1.ConditionFalse, infrav1.RBACFailedReason,
			"RoleBinding %s exists but is not managed by CAPTF (no %s=true label); CAPTF never modifies it: delete it or label it", ClusterRole, infrav1.ManagedLabel), nil
	case err == nil && rb.RoleRef != roleRef:
		b.write, b.rb = writeReplace, rb
	case apierrors.IsNotFound(err):
		b.write = writeCreate
	case err != nil:
		return b.with(metav1.ConditionFalse, infrav1.RBACFailedReason, "Could not read RoleBinding %s: %s", ClusterRole, apierr.Reason(err)), err
	case !hasSubject(rb.Subjects, b.subject()):
		b.write, b.rb = writeSubject, rb
	}
	return b.with(metav1.ConditionTrue, infrav1.RBACReadyReason, "Jobs run as ServiceAccount %s, bound to ClusterRole %s", sa, ClusterRole), nil
}

// with is b with the condition it reports once written.
func (b Binding) with(status metav1.ConditionStatus, reason, format string, args ...any) Binding {
	b.cond = metav1.Condition{Type: infrav1.RunnerRBACReadyCondition, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
	return b
}

// Ready reports whether the runner may run once the write is done.
func (b Binding) Ready() bool { return b.cond.Status == metav1.ConditionTrue }

// Condition is RunnerRBACReady as it stands once the write is done.
func (b Binding) Condition() metav1.Condition { return b.cond }

// Due reports whether a write is needed.
func (b Binding) Due() bool { return b.account || b.write != writeNone }

// Write does the write Check found needed and returns RunnerRBACReady as
// it then stands: RBACFailed, with the error, when the write failed.
func (b Binding) Write(ctx context.Context, c client.Client) (metav1.Condition, error) {
	failed := func(err error, format string, args ...any) (metav1.Condition, error) {
		return b.with(metav1.ConditionFalse, infrav1.RBACFailedReason, format+": %s", append(args, apierr.Reason(err))...).cond, err
	}
	subject := b.subject()
	if b.account {
		account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: b.ns, Name: b.sa, Labels: map[string]string{infrav1.ManagedLabel: "true"}}}
		if err := c.Create(ctx, account); err != nil && !apierrors.IsAlreadyExists(err) {
			return failed(err, "Could not create ServiceAccount %s", b.sa)
		}
	}
	var err error
	switch b.write {
	case writeUnbind:
		if err := unbind(ctx, c, b.ns, b.sa); err != nil {
			return failed(err, "Could not update RoleBinding %s", ClusterRole)
		}
		return b.cond, nil
	case writeReplace:
		// A roleRef cannot change in place: the binding is made again,
		// with the namespace's ServiceAccounts it had (never a user, a
		// group or another namespace's account: what the runner role
		// grants, CAPTF grants to its runners only).
		rb := b.rb
		if err := c.Delete(ctx, rb, client.Preconditions{UID: &rb.UID}); err != nil && !apierrors.IsNotFound(err) {
			return failed(err, "Could not replace RoleBinding %s bound to %s %s", ClusterRole, rb.RoleRef.Kind, rb.RoleRef.Name)
		}
		var kept []rbacv1.Subject
		for _, s := range withoutSubject(rb.Subjects, subject) {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == b.ns {
				kept = append(kept, s)
			}
		}
		err = create(ctx, c, b.ns, append(kept, subject))
	case writeCreate:
		err = create(ctx, c, b.ns, []rbacv1.Subject{subject})
	case writeSubject:
		rb := b.rb.DeepCopy()
		patch := client.MergeFrom(b.rb)
		rb.Subjects = append(rb.Subjects, subject)
		err = c.Patch(ctx, rb, patch)
	}
	if err != nil {
		return failed(err, "Could not write RoleBinding %s", ClusterRole)
	}
	return b.cond, nil
}

// subject is the RoleBinding subject of the runner ServiceAccount.
func (b Binding) subject() rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: b.sa, Namespace: b.ns}
}

// Ensure checks and writes at once: the runner ServiceAccount sa may run
// in ns once it returns RunnerRBACReady True (Check, Binding.Write).
func Ensure(ctx context.Context, c client.Client, ns, sa string) (metav1.Condition, error) {
	b, err := Check(ctx, c, ns, sa)
	if err != nil {
		return b.cond, err
	}
	return b.Write(ctx, c)
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
