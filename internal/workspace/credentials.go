package workspace

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"captf.io/captf/internal/credentials"
)

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
	case c.RevokeDue():
		res, err := credentials.RevokeMirror(ctx, p.e.client(), ns, c.Identity)
		if err != nil {
			return err
		}
		c.Written = true
		if res.Outcome == credentials.OutcomeRemoved {
			p.eventf(corev1.EventTypeNormal, credentials.MirrorRemovedEvent, "Deleted credentials mirror %s: the identity no longer allows namespace %s", res.Mirror.Name, ns)
		}
	case c.MirrorDue():
		c.Check.Mirror, c.Check.MirrorErr = credentials.EnsureMirror(ctx, p.e.client(), p.e.APIReader, c.Source, p.obj)
		c.Written = true
		if c.Check.Mirror.Outcome == credentials.OutcomeCreated && c.Check.MirrorErr == nil {
			p.eventf(corev1.EventTypeNormal, credentials.MirrorCreatedEvent, "Created credentials mirror %s", c.Check.Mirror.Mirror.Name)
		}
		c.Conclude()
		for _, cond := range c.Conditions {
			p.set(cond)
		}
	}
	return nil
}
