package workspace

import (
	"context"
	"errors"
	"fmt"

	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
)

// upkeep gathers what the pass's chores are chosen from (decide.Chores).
func (p *pass) upkeep(paused bool) decide.Upkeep {
	u := decide.Upkeep{Paused: paused, PlanKeyUnsaved: p.inputs.unsaved, HoldDue: p.inputs.holdDue, StuckJob: p.running.stuck != nil, NoResourcesConfirmed: p.confirmedJob != "", FallbackJob: p.running.fallback != nil, UnpulledJob: p.running.unpulled != nil, SurplusPieces: len(p.stored.surplus), StraySecrets: len(p.strayState()) > 0,
		StrayBackups: len(p.strayBackups()) > 0, BackedUp: p.backedUp()}
	u.PrunableJobs = len(jobs.Prunable(p.jobs, int(p.eff.Policy.SuccessfulJobsHistoryLimit), int(p.eff.Policy.FailedJobsHistoryLimit)))
	u.PlanMoves, u.PrunablePlans = len(p.planMoves), p.prunablePlans(paused || !p.obj.GetDeletionTimestamp().IsZero())
	_, u.Remediates = p.remediator()
	u.SyncsOwner = p.caps().SyncsOwner
	u.MirrorDue, u.RunnerUnbound = p.creds.MirrorDue() || p.creds.RevokeDue(), p.rbac.binding.Due()
	if p.stored.state != nil {
		u.StateSerial = p.stored.state.Serial
	}
	if prov := p.w.Status.Initialization.Provisioned; prov != nil && *prov {
		u.Provisioned = true
	}
	return u
}

// choreSnapshot is the snapshot of a pass that decides, with what its
// chores are chosen from.
func (p *pass) choreSnapshot(deleting bool) decide.Snapshot {
	s := p.snapshot(deleting)
	s.Upkeep = p.upkeep(false)
	return s
}

// firstChores returns the first chores (decide.FirstChores) that u, what
// the pass has observed so far of what chooses them, chooses; a retained
// state the pass listed is StateRetained.
func (p *pass) firstChores(u decide.Upkeep, retained bool) []decide.Chore {
	u.Paused = p.owner.Paused
	s := decide.Snapshot{Deleting: !p.obj.GetDeletionTimestamp().IsZero(), JobActive: p.active != nil, Upkeep: u}
	if retained {
		s.State = decide.StateRetained
	}
	return decide.FirstChores(s)
}

// doFirstChores does the first chores u chooses (firstChores), before the
// pass observes what they write: once the Jobs are read, the record of
// the one status.activeJob named that vanished; once the evacuation
// namespace is read, the state to copy back and the namespace to let go;
// once the finished Jobs' pods are read, the bookkeeping.
func (p *pass) doFirstChores(ctx context.Context, u decide.Upkeep) error {
	return p.doEach(ctx, p.firstChores(u, false))
}

// undecidedSnapshot is what the chores of a pass that decides nothing are
// chosen from, as a paused pass's: a paused pass, or one that failed
// before its chores (a stuck Job still goes, an unpullable one still
// falls back or is stopped).
//
// Such a pass writes nothing it keyed (the plan key it made, a pool's
// held exports change): it decided nothing, and its chores run without
// the owner check of the writes past the gate. The next pass makes its
// key again.
func (p *pass) undecidedSnapshot() decide.Snapshot {
	u := p.upkeep(true)
	u.PlanKeyUnsaved, u.HoldDue = false, false
	return decide.Snapshot{Deleting: !p.obj.GetDeletionTimestamp().IsZero(), JobActive: p.active != nil, Upkeep: u}
}

// doChores does the chores chosen after observing, in their order; the
// first that fails fails the pass. A pass does them once.
func (p *pass) doChores(ctx context.Context, chores []decide.Chore) error {
	p.choresDone = true
	return p.doEach(ctx, chores)
}

// doEach does chores in their order, up to the first that fails; a
// chore that fails last (decide.Chore.FailsLast) fails the pass once the
// others are done.
func (p *pass) doEach(ctx context.Context, chores []decide.Chore) error {
	var last error
	for _, c := range chores {
		err := p.doChore(ctx, c)
		switch {
		case err == nil:
		case c.FailsLast():
			last = errors.Join(last, err)
		default:
			return errors.Join(err, last)
		}
	}
	return last
}

// doChore does one chore.
func (p *pass) doChore(ctx context.Context, c decide.Chore) error {
	switch c {
	case decide.ChoreRecordVanishedJob:
		return p.recordVanished(ctx)
	case decide.ChoreCopyBackState:
		return p.copyBack(ctx)
	case decide.ChoreReleaseEvacuation:
		return p.releaseEvacuation(ctx)
	case decide.ChoreBookkeep:
		return p.bookkeep(ctx)
	case decide.ChoreAdoptRetained:
		return p.adoptRetained(ctx, p.retainedFrom())
	case decide.ChoreMakePlanKey:
		return p.savePlanKey(ctx)
	case decide.ChoreMirrorCredentials:
		return p.mirrorCredentials(ctx)
	case decide.ChoreBindRunner:
		return p.bindRunner(ctx)
	case decide.ChoreRecordHeldExports:
		return p.recordHold(ctx)
	case decide.ChoreDeleteStuckJob:
		return p.deleteStuckJob(ctx)
	case decide.ChoreFallBackImage:
		return p.fallBackImage(ctx)
	case decide.ChoreStopUnpulledJob:
		// It fails through its deadline, so that it stays in the history
		// and counts toward the backoff.
		return p.e.runs().Stop(ctx, p.running.unpulled.job, p.running.unpulled.runner)
	case decide.ChorePruneJobs:
		return p.prune(ctx)
	case decide.ChoreConfirmNoResources:
		return p.writeNoResources(ctx)
	case decide.ChoreReownBackups:
		return p.reownBackups(ctx)
	case decide.ChoreReleaseSurplus:
		return p.releaseSurplus(ctx)
	case decide.ChoreProtectDeleting:
		return p.protectDeleting(ctx)
	case decide.ChoreReownState:
		return p.reownState(ctx)
	case decide.ChoreBackUpState:
		return p.backUp(ctx)
	case decide.ChoreSyncOwner:
		return p.afterStep(ctx)
	case decide.ChoreSyncRemediation:
		return p.syncRemediation(ctx)
	case decide.ChoreSyncPlans:
		return p.writePlanMoves(ctx)
	case decide.ChorePrunePlans:
		return p.plansWriter().Prune(ctx, p.plans)
	}
	return fmt.Errorf("unknown chore %q", c)
}

// choresAfter does, after a pass that failed (err) before its chores, the
// chores of a pass that decides nothing: a stuck Job still goes (it holds
// a run lease and a Job slot), an unpullable one still falls back or is
// stopped. A void
// pass (its owner moved) does nothing more.
func (p *pass) choresAfter(ctx context.Context, err error) error {
	if err == nil || p.choresDone || p.ownerMoved {
		return err
	}
	return errors.Join(err, p.doChores(ctx, decide.Chores(p.undecidedSnapshot())))
}

// prune deletes the finished Jobs beyond the history limits, with their
// pods (background propagation).
func (p *pass) prune(ctx context.Context) error {
	for _, j := range jobs.Prunable(p.jobs, int(p.eff.Policy.SuccessfulJobsHistoryLimit), int(p.eff.Policy.FailedJobsHistoryLimit)) {
		if err := p.e.runs().Delete(ctx, j); err != nil {
			return fmt.Errorf("pruning Job %s: %w", j.Name, err)
		}
	}
	return nil
}
