package credentials

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// maxMessage bounds a condition message.
const maxMessage = 1024

// Check is what one reconcile of a workload object learned about its
// identity; IdentityAllowedCondition and CredentialsMirroredCondition turn
// it into conditions. The zero value is "no identity".
type Check struct {
	// IdentityName names the identity the object resolved to ("" = none).
	IdentityName string
	// IdentityFound is true when the named identity exists.
	IdentityFound bool
	// Namespace is the object's namespace.
	Namespace string
	// Allowed, AllowedMessage and AllowedErr are what Allowed returned.
	Allowed        bool
	AllowedMessage string
	AllowedErr     error
	// Mirror and MirrorErr are what EnsureMirror returned (only when allowed).
	Mirror    Result
	MirrorErr error
}

// IdentityAllowedCondition computes the IdentityAllowed condition: whether
// the identity exists, allows the namespace and has a complete source
// Secret. A check that could not be made is Unknown/IdentityCheckFailed.
func IdentityAllowedCondition(ch Check) metav1.Condition {
	cond := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		return condition(infrav1.IdentityAllowedCondition, status, reason, format, args...)
	}
	switch {
	case ch.IdentityName == "":
		return cond(metav1.ConditionFalse, infrav1.IdentityNotFoundReason,
			"No identity is referenced: set spec.identityRef (or the TerraformCluster's spec.defaults.identityRef)")
	case !ch.IdentityFound:
		return cond(metav1.ConditionFalse, infrav1.IdentityNotFoundReason,
			"TerraformClusterIdentity %s does not exist; create it or change identityRef", ch.IdentityName)
	case ch.AllowedErr != nil:
		return cond(metav1.ConditionUnknown, infrav1.IdentityCheckFailedReason,
			"Could not check TerraformClusterIdentity %s: %s", ch.IdentityName, errorSummary(ch.AllowedErr))
	case !ch.Allowed:
		return cond(metav1.ConditionFalse, infrav1.NamespaceNotAllowedReason, "%s", ch.AllowedMessage)
	case ch.MirrorErr != nil && errors.Is(ch.MirrorErr, ErrSourceUnreadable):
		return cond(metav1.ConditionUnknown, infrav1.IdentityCheckFailedReason,
			"Could not read source Secret %s of TerraformClusterIdentity %s: %s", ch.Mirror.Source, ch.IdentityName, errorSummary(ch.MirrorErr))
	case ch.Mirror.Outcome == OutcomeSourceNotFound:
		return cond(metav1.ConditionFalse, infrav1.SecretNotFoundReason,
			"Source Secret %s of TerraformClusterIdentity %s does not exist; create it", ch.Mirror.Source, ch.IdentityName)
	case ch.Mirror.Outcome == OutcomeSourceIncomplete:
		return cond(metav1.ConditionFalse, infrav1.CredentialsIncompleteReason,
			"Source Secret %s of TerraformClusterIdentity %s lacks the required keys %s; add them to the Secret or remove them from spec.requiredKeys",
			ch.Mirror.Source, ch.IdentityName, strings.Join(ch.Mirror.MissingKeys, ", "))
	}
	return cond(metav1.ConditionTrue, infrav1.IdentityAllowedReason, "%s", ch.AllowedMessage)
}

// CredentialsMirroredCondition computes the CredentialsMirrored condition.
// It is Unknown/MirrorPending until IdentityAllowed is True.
func CredentialsMirroredCondition(ch Check) metav1.Condition {
	cond := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		return condition(infrav1.CredentialsMirroredCondition, status, reason, format, args...)
	}
	if IdentityAllowedCondition(ch).Status != metav1.ConditionTrue {
		return cond(metav1.ConditionUnknown, infrav1.MirrorPendingReason, "The credentials mirror waits for IdentityAllowed to be True")
	}
	switch {
	case ch.MirrorErr != nil:
		return cond(metav1.ConditionFalse, infrav1.MirrorFailedReason,
			"Could not write mirror Secret %s: %s", ch.Mirror.Mirror, errorSummary(ch.MirrorErr))
	case ch.Mirror.Outcome == OutcomeConflict:
		return cond(metav1.ConditionFalse, infrav1.MirrorFailedReason,
			"Secret %s is not a credentials mirror of TerraformClusterIdentity %s (%s) and is never overwritten; rename or remove it",
			ch.Mirror.Mirror, ch.IdentityName, ch.Mirror.Conflict)
	case ch.Mirror.Outcome == OutcomeCreated, ch.Mirror.Outcome == OutcomeUpdated, ch.Mirror.Outcome == OutcomeUnchanged:
		return cond(metav1.ConditionTrue, infrav1.MirroredReason,
			"Secret %s mirrors source Secret %s", ch.Mirror.Mirror, ch.Mirror.Source)
	}
	return cond(metav1.ConditionUnknown, infrav1.MirrorPendingReason, "The credentials mirror has not been written yet")
}

func condition(condType string, status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
	msg := fmt.Sprintf(format, args...)
	if len(msg) > maxMessage {
		msg = msg[:maxMessage-3] + "..."
	}
	return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: msg}
}

// errorSummary describes an error for a condition message. API errors
// about Secrets name the Secret and the failure, never its data.
func errorSummary(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		if s.Reason == metav1.StatusReasonInvalid {
			// The message of an invalid Secret may quote its values:
			// only the fields are named.
			fields := []string{}
			if s.Details != nil {
				for _, c := range s.Details.Causes {
					if c.Field != "" {
						fields = append(fields, c.Field)
					}
				}
			}
			if len(fields) == 0 {
				return "the API server rejected the Secret as invalid without naming a field (a ValidatingAdmissionPolicy or webhook may refuse it; see the API server's audit log)"
			}
			return fmt.Sprintf("the API server rejected the Secret (invalid fields: %s)", strings.Join(fields, ", "))
		}
		msg := withoutDenialText(s.Message)
		if !knownReason(s.Reason) {
			// A webhook's denial passes its own reason on as it wrote it.
			return msg
		}
		return fmt.Sprintf("%s (%s)", msg, s.Reason)
	}
	return err.Error()
}

// denials end the part of an API server's message that names the
// admission webhook or policy that refused a request; what follows is
// that webhook's or policy's own text.
var denials = []string{"denied the request:", "denied request:"}

// withoutDenialText keeps of msg what names the webhook or policy that
// refused the Secret, not its own text: a webhook's text, or a policy's
// messageExpression, may quote the Secret's values. The first denial
// phrase ends it: the text after it may hold another.
func withoutDenialText(msg string) string {
	cut := -1
	for _, d := range denials {
		if i := strings.Index(msg, d); i >= 0 && (cut < 0 || i < cut) {
			cut = i + len(d) - 1
		}
	}
	if cut < 0 {
		return msg
	}
	return msg[:cut] + " (its text is not quoted: it may quote the Secret's values)"
}

// knownReason: r is one of the API server's own reasons, not a word a
// webhook chose.
func knownReason(r metav1.StatusReason) bool {
	switch r {
	case metav1.StatusReasonUnauthorized, metav1.StatusReasonForbidden, metav1.StatusReasonNotFound, metav1.StatusReasonAlreadyExists,
		metav1.StatusReasonConflict, metav1.StatusReasonGone, metav1.StatusReasonInvalid, metav1.StatusReasonServerTimeout,
		metav1.StatusReasonStoreReadError, metav1.StatusReasonTimeout, metav1.StatusReasonTooManyRequests, metav1.StatusReasonBadRequest,
		metav1.StatusReasonMethodNotAllowed, metav1.StatusReasonNotAcceptable, metav1.StatusReasonRequestEntityTooLarge,
		metav1.StatusReasonUnsupportedMediaType, metav1.StatusReasonInternalError, metav1.StatusReasonExpired, metav1.StatusReasonServiceUnavailable:
		return true
	}
	return false
}

// LocalSecretConditions are IdentityAllowed and CredentialsMirrored of an
// identityRef of kind Secret: Secret name of namespace ns, delivered as
// it is, without a mirror, once found.
func LocalSecretConditions(ns, name string, found bool) []metav1.Condition {
	if !found {
		return []metav1.Condition{
			{Type: infrav1.IdentityAllowedCondition, Status: metav1.ConditionFalse, Reason: infrav1.SecretNotFoundReason,
				Message: fmt.Sprintf("Secret %s/%s named by identityRef does not exist; create it", ns, name)},
			{Type: infrav1.CredentialsMirroredCondition, Status: metav1.ConditionUnknown, Reason: infrav1.MirrorPendingReason,
				Message: "The credentials wait for IdentityAllowed to be True"},
		}
	}
	return []metav1.Condition{
		{Type: infrav1.IdentityAllowedCondition, Status: metav1.ConditionTrue, Reason: infrav1.LocalSecretReason,
			Message: fmt.Sprintf("Jobs use Secret %s of the object's namespace", name)},
		{Type: infrav1.CredentialsMirroredCondition, Status: metav1.ConditionTrue, Reason: infrav1.MirroredReason,
			Message: fmt.Sprintf("Secret %s is delivered as it is; a local Secret needs no mirror", name)},
	}
}
