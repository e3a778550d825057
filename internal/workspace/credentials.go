package workspace

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
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
	// Ready: a Job may start (once the mirror is written).
	Ready      bool
	Conditions []metav1.Condition
	// check is what the conditions were computed from; identity the
	// identity read, for the mirror's write.
	check    credentials.Check
	identity *infrav1.TerraformClusterIdentity
	// written: the mirror's write (or deletion) was done this pass.
	written bool
}

// mirrorDue: the mirror is to be created or updated (the chore
// MirrorCredentials); revokeDue: it is to be deleted, as the identity no
// longer allows the namespace.
func (c creds) mirrorDue() bool {
	o := c.check.Mirror.Outcome
	return !c.written && c.identity != nil && c.check.Allowed && c.check.MirrorErr == nil && (o == credentials.OutcomeCreated || o == credentials.OutcomeUpdated)
}

func (c creds) revokeDue() bool {
	return !c.written && c.identity != nil && !c.check.Allowed && c.check.AllowedErr == nil && c.check.Mirror.Outcome == credentials.OutcomeRemoved
}

// credentials resolves the effective identity reference, checks that the
// identity allows the namespace and what its mirror needs (read live),
// writing nothing: the chore MirrorCredentials writes the mirror, or
// deletes the one of a namespace the identity no longer allows. No
// credential value is ever read into anything but the mirror.
func (e *Engine) credentials(ctx context.Context, obj client.Object, ref *infrav1.IdentityReference) (creds, error) {
	ns := obj.GetNamespace()
	if ref != nil && ref.Kind == infrav1.IdentityKindSecret {
		return e.localSecret(ctx, ns, ref.Name)
	}
	out := creds{check: credentials.Check{Namespace: ns}}
	ch := &out.check
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
			out.identity = identity
			ch.IdentityFound = true
			ch.Allowed, ch.AllowedMessage, ch.AllowedErr = credentials.Allowed(ctx, e.client(), identity, ns)
			switch {
			case ch.AllowedErr != nil:
			case ch.Allowed:
				ch.Mirror, ch.MirrorErr = credentials.CheckMirror(ctx, e.client(), e.APIReader, identity, obj)
			default:
				var err error
				if ch.Mirror, err = credentials.CheckRevoke(ctx, e.client(), ns, ref.Name); err != nil {
					return out, err
				}
			}
		}
	}
	out.conclude()
	return out, nil
}

// conclude computes the conditions, and whether a Job may start, from
// the check.
func (c *creds) conclude() {
	allowed := credentials.IdentityAllowedCondition(c.check)
	mirrored := credentials.CredentialsMirroredCondition(c.check)
	c.Conditions = []metav1.Condition{allowed, mirrored}
	c.Ready = allowed.Status == metav1.ConditionTrue && mirrored.Status == metav1.ConditionTrue
	c.Secret = ""
	if c.Ready {
		c.Secret = c.check.Mirror.Mirror.Name
	}
}

// mirrorCredentials (the chore MirrorCredentials, and the action's own
// credentials step) writes the mirror the credentials step found due, or
// deletes the one of a namespace the identity no longer allows. A write
// that fails says so on CredentialsMirrored (MirrorFailed) and leaves the
// credentials not ready, so the pass starts no Job, as when the step
// found them wanting.
func (p *pass) mirrorCredentials(ctx context.Context) error {
	c := &p.creds
	ns := p.obj.GetNamespace()
	switch {
	case c.revokeDue():
		res, err := credentials.RevokeMirror(ctx, p.e.client(), ns, c.Identity)
		if err != nil {
			return err
		}
		c.written = true
		if res.Outcome == credentials.OutcomeRemoved {
			p.eventf(corev1.EventTypeNormal, credentials.MirrorRemovedEvent, "Deleted credentials mirror %s: the identity no longer allows namespace %s", res.Mirror.Name, ns)
		}
	case c.mirrorDue():
		c.check.Mirror, c.check.MirrorErr = credentials.EnsureMirror(ctx, p.e.client(), p.e.APIReader, c.identity, p.obj)
		c.written = true
		if c.check.Mirror.Outcome == credentials.OutcomeCreated && c.check.MirrorErr == nil {
			p.eventf(corev1.EventTypeNormal, credentials.MirrorCreatedEvent, "Created credentials mirror %s", c.check.Mirror.Mirror.Name)
		}
		c.conclude()
		for _, cond := range c.Conditions {
			p.set(cond)
		}
	}
	return nil
}

// localSecret is identityRef kind Secret: a Secret of the object's own
// namespace, delivered as it is, without a mirror.
func (e *Engine) localSecret(ctx context.Context, ns, name string) (creds, error) {
	out := creds{Identity: name, Kind: infrav1.IdentityKindSecret}
	secret := &corev1.Secret{}
	err := e.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		out.Conditions = credentials.LocalSecretConditions(ns, name, false)
		return out, nil
	case err != nil:
		return out, err
	}
	out.Ready, out.Secret = true, name
	out.Conditions = credentials.LocalSecretConditions(ns, name, true)
	return out, nil
}
