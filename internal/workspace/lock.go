package workspace

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/custody"
)

// readLock reads the object's state lock live: nil when nobody holds it.
func (p *pass) readLock(ctx context.Context) (*custody.Lock, error) {
	return p.custody().ReadLock(ctx, p.runNamespace(), p.suffix(), p.role.Kind(), p.obj.GetName())
}

// checkLock runs while no Job of the object is active: a lock left by one
// of its own Jobs whose pod finished, or is gone and waited out
// (custody.Keeper.LockHolderDead), is stale and handed to the next Job to force-unlock;
// any other holder is reported as StateLocked, a live report (Jobs still
// start and wait lockTimeoutSeconds for it).
func (p *pass) checkLock(ctx context.Context) error {
	p.forceUnlock = ""
	l, err := p.readLock(ctx)
	if err != nil || l == nil {
		return err
	}
	if l.Pod != "" {
		dead, err := p.custody().LockHolderDead(ctx, p.runNamespace(), p.suffix(), l, p.eff.Policy.ActiveDeadlineSeconds, p.now, p.e.gates().Options)
		if err != nil || !dead {
			return err // its holder may still run: the lock is live
		}
		p.forceUnlock = l.ID
		return nil
	}
	if c := p.current(infrav1.StateReadableCondition); c != nil && c.Status == metav1.ConditionFalse && c.Reason != infrav1.StateLockedReason {
		return nil // a hold (lost, corrupt, retained, ...) says more than a lock
	}
	p.report(conditions.StateLocked(l.Info.Who, l.Info.Operation, l.Info.Created))
	return nil
}

// checkForeignLock runs while a Job of the object is active and the state
// is not read: a StateLocked an earlier pass reported is said again while
// the other holder keeps the lock, and once it let go (the Job may hold
// it now) StateReadable says again what the state read said before it (a
// live report). A lock that cannot be read, or one seen in the object's
// namespace while the Job runs in its evacuation namespace, stays as it
// was said.
func (p *pass) checkForeignLock(ctx context.Context) error {
	c := p.current(infrav1.StateReadableCondition)
	if c == nil || c.Reason != infrav1.StateLockedReason {
		return nil
	}
	if p.evac.ns != nil {
		p.report(*c)
		return nil
	}
	l, err := p.readLock(ctx)
	switch {
	case err != nil:
		ctrl.LoggerFrom(ctx).Error(err, "Reading the state lock again while a Job runs")
		p.report(*c)
	case l != nil && l.Pod == "":
		p.report(conditions.StateLocked(l.Info.Who, l.Info.Operation, l.Info.Created))
	}
	return nil
}
