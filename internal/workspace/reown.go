package workspace

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"captf.io/captf/internal/custody"
)

// strayState are the object's state Secrets that lack its owner
// reference or protection.
func (p *pass) strayState() []*corev1.Secret { return custody.UnkeptOf(p.stored.secrets, p.obj) }

// reownState (the chore ReownState) gives the object's owner reference and
// protection back to state Secrets that lack either: chunks a refresh,
// drift or failed apply wrote after the last adoption, chunks still owned
// by an earlier object of the name (an earlier UID, after a restore or a
// move), and Secrets written before CAPTF protected them; then also to its
// inputs records and plan key. It is chosen only while no Job of the
// object runs, for a live object, and never on a retained state, which is
// adopted only when asked; it does nothing while a Job holds the run
// lease.
func (p *pass) reownState(ctx context.Context) error {
	stray := p.strayState()
	if len(stray) == 0 {
		return nil
	}
	if held, err := p.runLeaseHeld(ctx); err != nil || held {
		return err
	}
	records, err := p.custody().UnkeptRecords(ctx, p.obj, p.role.Kind())
	if err != nil {
		return err
	}
	stray = append(stray, records...)
	n, err := p.custody().Reown(ctx, p.obj, p.role.Kind(), stray)
	if err != nil || n == 0 {
		return err
	}
	p.eventf(corev1.EventTypeNormal, "OwnerReferencesRepaired", "Re-owned %d Secrets (state, inputs records, plan key) that lacked an owner reference to this object or its protection", n)
	return nil
}
