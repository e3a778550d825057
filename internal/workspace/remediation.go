package workspace

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/roles"
)

// remediator is the object's health bookkeeping and remediation request,
// when its kind has them (roles.Remediator).
func (p *pass) remediator() (roles.Remediator, bool) {
	r, ok := p.role.(roles.Remediator)
	return r, ok
}

// syncRemediation writes the remediation request, or its withdrawal, the
// role wants on a provisioned object's Machine.
func (p *pass) syncRemediation(ctx context.Context) error {
	r, ok := p.remediator()
	health := p.current(infrav1.InfrastructureHealthyCondition)
	if !ok || health == nil {
		return nil
	}
	change := r.Remediation(p.obj, p.owner, *health)
	if change == nil {
		return nil
	}
	patch := client.MergeFromWithOptions(change.Base, client.MergeFromWithOptimisticLock{})
	if err := p.e.client().Patch(ctx, change.Machine, patch); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // changed or gone meanwhile: the next pass looks again
		}
		return fmt.Errorf("writing the remediation request on Machine %s: %w", change.Machine.Name, err)
	}
	p.owner.Object = change.Machine
	outcome := "withdrawn"
	if change.Requested {
		outcome = "requested"
	}
	metrics.ObserveRemediationRequest(outcome)
	p.roleEvents([]roles.Event{change.Event})
	return nil
}
