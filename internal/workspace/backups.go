package workspace

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/crashpoint"
	"captf.io/captf/internal/custody"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/pkg/state"
)

// custody is the keeper of the object's state Secrets, backups, records
// and plan key.
func (p *pass) custody() custody.Keeper {
	return custody.Keeper{Client: p.e.client(), Reader: p.e.APIReader}
}

// readBackups reads the object's backup sets, live, newest first, by
// their metadata only.
func (p *pass) readBackups(ctx context.Context) ([]state.Backup, error) {
	var err error
	if p.stored.backups, err = p.custody().ListBackups(ctx, p.obj.GetNamespace(), p.suffix()); err != nil {
		return nil, err
	}
	return state.Backups(p.stored.backups), nil
}

// listBackups reads the backup sets and re-owns those that lack the
// object (a chore's read).
func (p *pass) listBackups(ctx context.Context) ([]state.Backup, error) {
	sets, err := p.readBackups(ctx)
	if err != nil {
		return nil, err
	}
	return sets, p.reownBackups(ctx)
}

// strayBackups are the backup Secrets read that lack the object's owner
// reference (a set the runner rescued, or one owned by an earlier object
// of the name). Sets retained for another object are not.
func (p *pass) strayBackups() []*corev1.Secret { return custody.UnkeptOf(p.stored.backups, p.obj) }

// reownBackups (the chore ReownBackups, and part of BackUpState) gives the
// object's owner reference to its stray backup Secrets, so that they go
// with the object.
func (p *pass) reownBackups(ctx context.Context) error {
	n, err := p.custody().Reown(ctx, p.obj, p.role.Kind(), p.strayBackups())
	if err != nil || n == 0 {
		return err
	}
	p.eventf(corev1.EventTypeNormal, "OwnerReferencesRepaired", "Re-owned %d state backup Secrets that lacked an owner reference to this object or its protection", n)
	return nil
}

// backedUp: the status the pass read lists backups and had observed the
// serial read, so an unchanged state costs nothing.
func (p *pass) backedUp() bool {
	prev := p.role.View(p.before).Status
	return p.stored.state != nil && prev.ObservedStateSerial == p.stored.state.Serial && len(prev.StateBackups) > 0
}

// backUp (the chore BackUpState, for a state serial the object has not
// backed up yet) copies the serial into a backup set, prunes the sets
// beyond --state-backups, and lists the complete sets in the status.
func (p *pass) backUp(ctx context.Context) error {
	sets, err := p.listBackups(ctx)
	if err != nil {
		return err
	}
	if p.e.Options.StateBackups > 0 {
		if sets, err = p.takeBackup(ctx, sets); err != nil {
			return err
		}
	}
	p.w.Status.StateBackups = custody.Listed(sets)
	return nil
}

// takeBackup backs the state read up (custody.Keeper.TakeBackup) and, once
// a set is written, prunes the sets beyond --state-backups (a set a
// restore request names is kept and not counted; of the incomplete ones
// only the newest, which may still be being written).
func (p *pass) takeBackup(ctx context.Context, sets []state.Backup) ([]state.Backup, error) {
	r := custody.BackupRequest{Kind: p.role.Kind(), Suffix: p.suffix(), ClusterName: p.owner.ClusterName,
		State: p.stored.state, Secrets: p.stored.secrets, WithData: p.stored.data, InputsHash: p.stateInputsHash(), Now: p.now}
	if lr := p.w.Status.LastRun; lr != nil {
		r.SourceJob = lr.Job
	}
	name, n, secrets, err := p.custody().TakeBackup(ctx, p.obj, r, sets)
	if secrets != nil {
		p.stored.secrets, p.stored.data = secrets, true
	}
	if err != nil || name == "" {
		return sets, err
	}
	crashpoint.Hit(crashpoint.AfterBackup)
	metrics.StateBackups.WithLabelValues(p.role.Kind(), "taken").Inc()
	p.eventf(corev1.EventTypeNormal, "StateBackedUp", "Backed up state serial %d as %s (%d Secrets)", p.stored.state.Serial, name, n)
	if sets, err = p.listBackups(ctx); err != nil {
		return nil, err
	}
	kept, pruned, err := p.custody().PruneBackups(ctx, sets, p.e.Options.StateBackups, p.obj.GetAnnotations()[infrav1.RestoreStateAnnotation], p.stored.backups)
	if pruned > 0 {
		metrics.StateBackups.WithLabelValues(p.role.Kind(), "pruned").Add(float64(pruned))
	}
	return kept, err
}
