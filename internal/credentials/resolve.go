package credentials

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Resolved is what an object's credentials are, as a pass read them: what
// its Job gets, and the conditions that report it.
type Resolved struct {
	// Identity names the identity (or local Secret); Kind is its kind.
	Identity string
	Kind     infrav1.IdentityKind
	// Secret is the Secret the pod receives: the mirror, or the local one.
	Secret string
	// Ready: a Job may start (once the mirror is written).
	Ready      bool
	Conditions []metav1.Condition
	// Check is what the conditions were computed from; Source the
	// identity read (nil: none, or a local Secret), for the mirror's
	// write.
	Check  Check
	Source *infrav1.TerraformClusterIdentity
	// Written: the mirror's write (or deletion) was done.
	Written bool
}

// MirrorDue: the mirror is to be created or updated.
func (r Resolved) MirrorDue() bool {
	o := r.Check.Mirror.Outcome
	return !r.Written && r.Source != nil && r.Check.Allowed && r.Check.MirrorErr == nil && (o == OutcomeCreated || o == OutcomeUpdated)
}

// RevokeDue: the mirror is to be deleted, as the identity no longer
// allows the namespace.
func (r Resolved) RevokeDue() bool {
	return !r.Written && r.Source != nil && !r.Check.Allowed && r.Check.AllowedErr == nil && r.Check.Mirror.Outcome == OutcomeRemoved
}

// Conclude computes the conditions, and whether a Job may start, from the
// check.
func (r *Resolved) Conclude() {
	allowed := IdentityAllowedCondition(r.Check)
	mirrored := CredentialsMirroredCondition(r.Check)
	r.Conditions = []metav1.Condition{allowed, mirrored}
	r.Ready = allowed.Status == metav1.ConditionTrue && mirrored.Status == metav1.ConditionTrue
	r.Secret = ""
	if r.Ready {
		r.Secret = r.Check.Mirror.Mirror.Name
	}
}

// Resolve resolves obj's effective identity reference ref: whether the
// identity allows obj's namespace and what its mirror needs (the identity
// and namespaces read through c, the mirror and the source Secret live
// through reader), writing nothing; a local Secret (kind Secret) is read
// live and delivered as it is. No credential value is ever read into
// anything but the mirror.
func Resolve(ctx context.Context, c client.Client, reader client.Reader, obj client.Object, ref *infrav1.IdentityReference) (Resolved, error) {
	ns := obj.GetNamespace()
	if ref != nil && ref.Kind == infrav1.IdentityKindSecret {
		return localSecret(ctx, reader, ns, ref.Name)
	}
	out := Resolved{Check: Check{Namespace: ns}}
	ch := &out.Check
	if ref != nil {
		ch.IdentityName, out.Identity = ref.Name, ref.Name
		out.Kind = infrav1.IdentityKindTerraformClusterIdentity
		identity := &infrav1.TerraformClusterIdentity{}
		err := c.Get(ctx, client.ObjectKey{Name: ref.Name}, identity)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return out, err
		default:
			out.Source = identity
			ch.IdentityFound = true
			ch.Allowed, ch.AllowedMessage, ch.AllowedErr = Allowed(ctx, c, identity, ns)
			switch {
			case ch.AllowedErr != nil:
			case ch.Allowed:
				ch.Mirror, ch.MirrorErr = CheckMirror(ctx, c, reader, identity, obj)
			default:
				var err error
				if ch.Mirror, err = CheckRevoke(ctx, c, ns, ref.Name); err != nil {
					return out, err
				}
			}
		}
	}
	out.Conclude()
	return out, nil
}

// localSecret is identityRef kind Secret: a Secret of the object's own
// namespace, delivered as it is, without a mirror.
func localSecret(ctx context.Context, reader client.Reader, ns, name string) (Resolved, error) {
	out := Resolved{Identity: name, Kind: infrav1.IdentityKindSecret}
	secret := &corev1.Secret{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		out.Conditions = LocalSecretConditions(ns, name, false)
		return out, nil
	case err != nil:
		return out, err
	}
	out.Ready, out.Secret = true, name
	out.Conditions = LocalSecretConditions(ns, name, true)
	return out, nil
}

// Write does what r found due, once: the mirror's deletion (RevokeDue) or
// its write (MirrorDue), through c and reader, for obj. A write that fails
// is kept in the check (CredentialsMirrored says MirrorFailed) and leaves
// r not ready; after a write r is concluded again (rewrote). reason and
// note are the event to emit ("" for none).
func (r *Resolved) Write(ctx context.Context, c client.Client, reader client.Reader, obj client.Object) (rewrote bool, reason, note string, err error) {
	ns := obj.GetNamespace()
	switch {
	case r.RevokeDue():
		res, err := RevokeMirror(ctx, c, ns, r.Identity)
		if err != nil {
			return false, "", "", err
		}
		r.Written = true
		if res.Outcome == OutcomeRemoved {
			return false, MirrorRemovedEvent, fmt.Sprintf("Deleted credentials mirror %s: the identity no longer allows namespace %s", res.Mirror.Name, ns), nil
		}
	case r.MirrorDue():
		r.Check.Mirror, r.Check.MirrorErr = EnsureMirror(ctx, c, reader, r.Source, obj)
		r.Written = true
		if r.Check.Mirror.Outcome == OutcomeCreated && r.Check.MirrorErr == nil {
			reason, note = MirrorCreatedEvent, fmt.Sprintf("Created credentials mirror %s", r.Check.Mirror.Mirror.Name)
		}
		r.Conclude()
		return true, reason, note, nil
	}
	return false, "", "", nil
}
