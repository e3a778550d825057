package credentials

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestConditions(t *testing.T) {
	mirror := types.NamespacedName{Namespace: "team-a", Name: "captf-creds-aws"}
	source := types.NamespacedName{Namespace: "captf-system", Name: "aws-creds"}
	allowed := Check{IdentityName: "aws", IdentityFound: true, Namespace: "team-a", Allowed: true, AllowedMessage: "listed"}
	with := func(r Result, err error) Check {
		ch := allowed
		r.Mirror, r.Source, r.Identity = mirror, source, "aws"
		ch.Mirror, ch.MirrorErr = r, err
		return ch
	}
	apiErr := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "captf-creds-aws", errors.New("no"))
	// An invalid Secret's message may quote its values: only fields are
	// named. An admission policy's refusal names none.
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "captf-creds-aws", field.ErrorList{field.Invalid(field.NewPath("data", "TOKEN"), "s3cr3t-value", "bad")})
	denied := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonInvalid,
		Message: "secrets \"captf-creds-aws\" is forbidden: ValidatingAdmissionPolicy 'p' denied request: no", Details: &metav1.StatusDetails{Name: "captf-creds-aws"}}}
	// A webhook's (or a policy's messageExpression's) text may quote the
	// Secret: only who refused it is named.
	webhook := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonForbidden,
		Message: "admission webhook \"guard.example.com\" denied the request: TOKEN=s3cr3t-value is not allowed"}}
	// A webhook's own reason is passed on as it wrote it; a policy's text
	// may hold a denial phrase of its own.
	webhookReason := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: "TOKEN=s3cr3t-value",
		Message: "admission webhook \"guard.example.com\" denied the request: TOKEN=s3cr3t-value"}}
	policy := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonForbidden,
		Message: "secrets \"captf-creds-aws\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: TOKEN=s3cr3t-value denied the request: no"}}
	type want struct {
		status metav1.ConditionStatus
		reason string
		says   string
	}
	testCases := []struct {
		name     string
		check    Check
		identity want
		mirrored want
	}{
		{"no identity referenced", Check{},
			want{metav1.ConditionFalse, infrav1.IdentityNotFoundReason, "spec.identityRef"},
			want{metav1.ConditionUnknown, infrav1.MirrorPendingReason, "IdentityAllowed"}},
		{"identity missing", Check{IdentityName: "aws"},
			want{metav1.ConditionFalse, infrav1.IdentityNotFoundReason, "TerraformClusterIdentity aws does not exist"},
			want{metav1.ConditionUnknown, infrav1.MirrorPendingReason, ""}},
		{"namespace read failed", Check{IdentityName: "aws", IdentityFound: true, AllowedErr: errors.New("timeout")},
			want{metav1.ConditionUnknown, infrav1.IdentityCheckFailedReason, "timeout"},
			want{metav1.ConditionUnknown, infrav1.MirrorPendingReason, ""}},
		{"namespace not allowed", Check{IdentityName: "aws", IdentityFound: true, AllowedMessage: "does not allow namespace"},
			want{metav1.ConditionFalse, infrav1.NamespaceNotAllowedReason, "does not allow namespace"},
			want{metav1.ConditionUnknown, infrav1.MirrorPendingReason, ""}},
		{"source unreadable", with(Result{}, errors.Join(ErrSourceUnreadable, errors.New("boom"))),
			want{metav1.ConditionUnknown, infrav1.IdentityCheckFailedReason, "captf-system/aws-creds"},
			want{metav1.ConditionUnknown, infrav1.MirrorPendingReason, ""}},
		{"source missing", with(Result{Outcome: OutcomeSourceNotFound}, nil),
			want{metav1.ConditionFalse, infrav1.SecretNotFoundReason, "captf-system/aws-creds"},
			want{metav1.ConditionUnknown, infrav1.MirrorPendingReason, ""}},
		{"source incomplete", with(Result{Outcome: OutcomeSourceIncomplete, MissingKeys: []string{"A", "B"}}, nil),
			want{metav1.ConditionFalse, infrav1.CredentialsIncompleteReason, "A, B"},
			want{metav1.ConditionUnknown, infrav1.MirrorPendingReason, ""}},
		{"mirror write failed", with(Result{}, apiErr),
			want{metav1.ConditionTrue, infrav1.IdentityAllowedReason, "listed"},
			want{metav1.ConditionFalse, infrav1.MirrorFailedReason, "team-a/captf-creds-aws"}},
		{"mirror write invalid: the field, never the value", with(Result{}, invalid),
			want{metav1.ConditionTrue, infrav1.IdentityAllowedReason, ""},
			want{metav1.ConditionFalse, infrav1.MirrorFailedReason, "invalid fields: data.TOKEN"}},
		{"mirror write refused by an admission policy", with(Result{}, denied),
			want{metav1.ConditionTrue, infrav1.IdentityAllowedReason, ""},
			want{metav1.ConditionFalse, infrav1.MirrorFailedReason, "a ValidatingAdmissionPolicy or webhook may refuse it"}},
		{"mirror write refused by a webhook: who refused, never its text", with(Result{}, webhook),
			want{metav1.ConditionTrue, infrav1.IdentityAllowedReason, ""},
			want{metav1.ConditionFalse, infrav1.MirrorFailedReason, `admission webhook "guard.example.com" denied the request (its text is not quoted`}},
		{"mirror write refused by a webhook with a reason of its own", with(Result{}, webhookReason),
			want{metav1.ConditionTrue, infrav1.IdentityAllowedReason, ""},
			want{metav1.ConditionFalse, infrav1.MirrorFailedReason, `admission webhook "guard.example.com" denied the request (its text is not quoted`}},
		{"mirror write refused by a policy (Forbidden): the policy, never its text", with(Result{}, policy),
			want{metav1.ConditionTrue, infrav1.IdentityAllowedReason, ""},
			want{metav1.ConditionFalse, infrav1.MirrorFailedReason, `ValidatingAdmissionPolicy 'p' with binding 'b' denied request (its text is not quoted`}},
		{"foreign Secret in the way", with(Result{Outcome: OutcomeConflict, Conflict: "it lacks the label"}, nil),
			want{metav1.ConditionTrue, infrav1.IdentityAllowedReason, ""},
			want{metav1.ConditionFalse, infrav1.MirrorFailedReason, "rename or remove it"}},
		{"created", with(Result{Outcome: OutcomeCreated}, nil),
			want{metav1.ConditionTrue, infrav1.IdentityAllowedReason, ""},
			want{metav1.ConditionTrue, infrav1.MirroredReason, "team-a/captf-creds-aws"}},
		{"unchanged", with(Result{Outcome: OutcomeUnchanged}, nil),
			want{metav1.ConditionTrue, infrav1.IdentityAllowedReason, ""},
			want{metav1.ConditionTrue, infrav1.MirroredReason, ""}},
	}
	check := func(t *testing.T, got metav1.Condition, condType string, w want) {
		t.Helper()
		if got.Type != condType || got.Status != w.status || got.Reason != w.reason || !strings.Contains(got.Message, w.says) {
			t.Errorf("%s = %s/%s %q; want %s/%s naming %q", condType, got.Status, got.Reason, got.Message, w.status, w.reason, w.says)
		}
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, IdentityAllowedCondition(tc.check), infrav1.IdentityAllowedCondition, tc.identity)
			check(t, CredentialsMirroredCondition(tc.check), infrav1.CredentialsMirroredCondition, tc.mirrored)
			if m := CredentialsMirroredCondition(tc.check).Message; strings.Contains(m, "s3cr3t-value") {
				t.Errorf("CredentialsMirrored quotes a value of the Secret: %q", m)
			}
		})
	}
}

func TestResultEvent(t *testing.T) {
	m := types.NamespacedName{Namespace: "ns", Name: "captf-creds-aws"}
	testCases := []struct {
		outcome Outcome
		reason  string
	}{
		{OutcomeCreated, MirrorCreatedEvent}, {OutcomeRemoved, MirrorRemovedEvent},
		{OutcomeUpdated, ""}, {OutcomeUnchanged, ""}, {OutcomeReleased, ""}, {OutcomeAbsent, ""}, {OutcomeConflict, ""},
	}
	for _, tc := range testCases {
		reason, note, ok := Result{Outcome: tc.outcome, Mirror: m, Identity: "aws"}.Event()
		if reason != tc.reason || ok != (tc.reason != "") || (ok && !strings.Contains(note, "ns/captf-creds-aws")) {
			t.Errorf("%s: Event() = %q, %q, %v; want reason %q", tc.outcome, reason, note, ok, tc.reason)
		}
	}
}

// TestLocalSecretConditions: a local Secret is allowed and needs no
// mirror once it exists; a missing one says to create it, naming it.
func TestLocalSecretConditions(t *testing.T) {
	for _, tc := range []struct {
		found              bool
		allowed, mirrored  metav1.ConditionStatus
		allowedReason, say string
	}{
		{true, metav1.ConditionTrue, metav1.ConditionTrue, infrav1.LocalSecretReason, "Jobs use Secret cloud"},
		{false, metav1.ConditionFalse, metav1.ConditionUnknown, infrav1.SecretNotFoundReason, "Secret team-a/cloud named by identityRef does not exist; create it"},
	} {
		got := LocalSecretConditions("team-a", "cloud", tc.found)
		if len(got) != 2 || got[0].Type != infrav1.IdentityAllowedCondition || got[1].Type != infrav1.CredentialsMirroredCondition {
			t.Fatalf("found=%v: %+v, want IdentityAllowed then CredentialsMirrored", tc.found, got)
		}
		if got[0].Status != tc.allowed || got[0].Reason != tc.allowedReason || !strings.Contains(got[0].Message, tc.say) || got[1].Status != tc.mirrored {
			t.Errorf("found=%v: %+v, want IdentityAllowed %s/%s saying %q and CredentialsMirrored %s", tc.found, got, tc.allowed, tc.allowedReason, tc.say, tc.mirrored)
		}
	}
}
