package workspace

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/custody"
	"captf.io/captf/internal/records"
)

// strayState are the object's state Secrets that lack its owner
// reference or protection.
func (p *pass) strayState() []*corev1.Secret {
	var stray []*corev1.Secret
	for i := range p.stored.secrets {
		if custody.Unkept(&p.stored.secrets[i], p.obj) {
			stray = append(stray, &p.stored.secrets[i])
		}
	}
	return stray
}

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
	// A state owned by an earlier UID says the object was re-created (a
	// restore, a move): its other Secrets are owned by that UID too.
	for _, name := range append(p.recordNames(), p.planKeyName()) {
		s := &corev1.Secret{}
		if err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: p.obj.GetNamespace(), Name: name}, s); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if custody.Unkept(s, p.obj) {
			stray = append(stray, s)
		}
	}
	n, err := p.custody().Reown(ctx, p.obj, p.role.Kind(), stray)
	if err != nil || n == 0 {
		return err
	}
	p.eventf(corev1.EventTypeNormal, "OwnerReferencesRepaired", "Re-owned %d Secrets (state, inputs records, plan key) that lacked an owner reference to this object or its protection", n)
	return nil
}

// recordNames are the names of the object's attempt and applied records.
func (p *pass) recordNames() []string {
	return []string{records.AttemptName(p.role.Kind(), p.obj.GetName()), records.AppliedName(p.role.Kind(), p.obj.GetName())}
}
