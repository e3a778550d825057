package workspace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/credentials"
)

// creds is what the credentials step found: what a Job gets and the
// conditions that report it.
type creds struct {
	// Identity names the identity (or local Secret); Kind is its kind.
	Identity string
	Kind     infrav1.IdentityKind
	// Secret is the Secret the pod receives: the mirror, or the local one.
	Secret string
	// Ready: a Job may start.
	Ready      bool
	Conditions []metav1.Condition
	// Events are the events to emit.
	Events []conditions.Event
}

// credentials resolves the effective identity reference, checks that the
// identity allows the namespace, and makes the mirror current (read live).
// A revoked namespace loses its mirror. No credential value is ever read
// into anything but the mirror.
func (e *Engine) credentials(ctx context.Context, obj client.Object, ref *infrav1.IdentityReference) (creds, error) {
	ns := obj.GetNamespace()
	if ref != nil && ref.Kind == infrav1.IdentityKindSecret {
		return e.localSecret(ctx, ns, ref.Name)
	}
	ch := credentials.Check{Namespace: ns}
	var out creds
	if ref != nil {
		ch.IdentityName, out.Identity = ref.Name, ref.Name
		out.Kind = infrav1.IdentityKindTerraformClusterIdentity
		identity := &infrav1.TerraformClusterIdentity{}
		err := e.client().Get(ctx, client.ObjectKey{Name: ref.Name}, identity)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return out, err
		default:
			ch.IdentityFound = true
			ch.Allowed, ch.AllowedMessage, ch.AllowedErr = credentials.Allowed(ctx, e.client(), identity, ns)
			switch {
			case ch.AllowedErr != nil:
			case ch.Allowed:
				ch.Mirror, ch.MirrorErr = credentials.EnsureMirror(ctx, e.client(), e.APIReader, identity, obj)
				if ch.Mirror.Outcome == credentials.OutcomeCreated {
					out.Events = append(out.Events, conditions.Event{Type: corev1.EventTypeNormal, Reason: credentials.MirrorCreatedEvent, Note: fmt.Sprintf("Created credentials mirror %s", ch.Mirror.Mirror.Name)})
				}
			default:
				res, err := credentials.RevokeMirror(ctx, e.client(), ns, ref.Name)
				if err != nil {
					return out, err
				}
				if res.Outcome == credentials.OutcomeRemoved {
					out.Events = append(out.Events, conditions.Event{Type: corev1.EventTypeNormal, Reason: credentials.MirrorRemovedEvent, Note: fmt.Sprintf("Deleted credentials mirror %s: the identity no longer allows namespace %s", res.Mirror.Name, ns)})
				}
			}
		}
	}
	allowed := credentials.IdentityAllowedCondition(ch)
	mirrored := credentials.CredentialsMirroredCondition(ch)
	out.Conditions = []metav1.Condition{allowed, mirrored}
	out.Ready = allowed.Status == metav1.ConditionTrue && mirrored.Status == metav1.ConditionTrue
	if out.Ready {
		out.Secret = ch.Mirror.Mirror.Name
	}
	return out, nil
}

// localSecret is identityRef kind Secret: a Secret of the object's own
// namespace, delivered as it is, without a mirror.
func (e *Engine) localSecret(ctx context.Context, ns, name string) (creds, error) {
	out := creds{Identity: name, Kind: infrav1.IdentityKindSecret}
	secret := &corev1.Secret{}
	err := e.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		out.Conditions = []metav1.Condition{
			{Type: infrav1.IdentityAllowedCondition, Status: metav1.ConditionFalse, Reason: infrav1.SecretNotFoundReason,
				Message: fmt.Sprintf("Secret %s/%s named by identityRef does not exist; create it", ns, name)},
			{Type: infrav1.CredentialsMirroredCondition, Status: metav1.ConditionUnknown, Reason: infrav1.MirrorPendingReason,
				Message: "The credentials wait for IdentityAllowed to be True"},
		}
		return out, nil
	case err != nil:
		return out, err
	}
	out.Ready, out.Secret = true, name
	out.Conditions = []metav1.Condition{
		{Type: infrav1.IdentityAllowedCondition, Status: metav1.ConditionTrue, Reason: infrav1.LocalSecretReason,
			Message: fmt.Sprintf("Jobs use Secret %s of the object's namespace", name)},
		{Type: infrav1.CredentialsMirroredCondition, Status: metav1.ConditionTrue, Reason: infrav1.MirroredReason,
			Message: fmt.Sprintf("Secret %s is delivered as it is; a local Secret needs no mirror", name)},
	}
	return out, nil
}
