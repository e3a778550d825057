package workspace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/custody"
)

// retain releases the object without a destroy (deletionPolicy Retain):
// its state, records and backups are the user's now (custody.Keeper.Retain),
// its run and cluster leases go (gates.Keeper.DeleteLeases, as on
// release) and it leaves its credentials mirror.
func (p *pass) retain(ctx context.Context) error {
	kept, err := p.custody().Retain(ctx, p.obj, p.role.Kind(), p.suffix())
	if err != nil {
		return err
	}
	if err := p.e.gates().DeleteLeases(ctx, p.subject()); err != nil {
		return err
	}
	if ref := p.eff.IdentityRef; ref != nil && ref.Kind != infrav1.IdentityKindSecret {
		if _, err := credentials.ReleaseMirror(ctx, p.e.client(), p.obj.GetNamespace(), ref.Name, p.obj); err != nil {
			return fmt.Errorf("releasing the credentials mirror: %w", err)
		}
	}
	p.eventf(corev1.EventTypeNormal, "InfrastructureRetained",
		"deletionPolicy Retain: the infrastructure was not destroyed; %d Secrets (state, inputs records, plan key, backups) are kept, labelled %s=%s",
		kept, infrav1.RetainedFromUIDLabel, p.obj.GetUID())
	if err := p.removeFinalizer(ctx); err != nil {
		return err
	}
	return p.deleteUnownedJobs(ctx)
}

// retainedFrom returns the UID of the deleted object whose retained state
// the object's state Secrets are ("" when they are its own).
func (p *pass) retainedFrom() string { return custody.RetainedFrom(p.stored.secrets, p.obj) }

// adoptRetained makes the retained state, records and backups of a
// deleted object of the same name this object's (spec.adoptRetainedState,
// custody.Keeper.Adopt).
func (p *pass) adoptRetained(ctx context.Context, from string) error {
	if err := p.custody().Adopt(ctx, p.obj, p.role.Kind(), p.suffix()); err != nil {
		return err
	}
	p.eventf(corev1.EventTypeNormal, "RetainedStateAdopted", "Adopted the state, inputs records, plan key and backups retained by deleted object %s", from)
	return nil
}
