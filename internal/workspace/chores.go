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
	u := decide.Upkeep{Paused: paused, PlanKeyUnsaved: p.inputs.unsaved, HoldDue: p.inputs.holdDue, StuckJob: p.stuck != nil, NoResourcesConfirmed: p.confirmedJob != "", FallbackJob: p.fallback != nil, UnpulledJob: p.unpulled != nil, SurplusPieces: len(p.surplus), StraySecrets: len(p.strayState()) > 0,
		StrayBackups: len(p.strayBackups()) > 0, BackedUp: p.backedUp()}
	u.PrunableJobs = len(jobs.Prunable(p.jobs, int(p.eff.Policy.SuccessfulJobsHistoryLimit), int(p.eff.Policy.FailedJobsHistoryLimit)))
	u.PlanMoves, u.PrunablePlans = len(p.planMoves), p.prunablePlans(paused || !p.obj.GetDeletionTimestamp().IsZero())
	_, u.Remediates = p.remediator()
	u.SyncsOwner = p.caps().SyncsOwner
	u.MirrorDue, u.RunnerUnbound = p.creds.mirrorDue() || p.creds.revokeDue(), p.binding.Due()
	if p.st != nil {
		u.StateSerial = p.st.Serial
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

// jobsSnapshot is what the first chores of a pass are chosen from
// (decide.FirstChores): its Jobs, before anything else is observed.
func (p *pass) jobsSnapshot() decide.Snapshot {
	return decide.Snapshot{Deleting: !p.obj.GetDeletionTimestamp().IsZero(), JobActive: p.active != nil,
		Upkeep: decide.Upkeep{Paused: p.owner.Paused, Unbookkept: len(p.outcomes), EvacuatedCopy: p.evacCopy, EvacuationEnding: p.evacEnding}}
}

// stateSnapshot is what the first chores of a pass that listed a state
// retained from another object are chosen from (decide.FirstChores).
func (p *pass) stateSnapshot() decide.Snapshot {
	return decide.Snapshot{JobActive: p.active != nil, State: decide.StateRetained,
		Upkeep: decide.Upkeep{AdoptsRetained: p.w.AdoptRetainedState}}
}

// doFirstChores does the chores the pass's Jobs choose before it observes
// the rest, which reads what they write.
func (p *pass) doFirstChores(ctx context.Context) error {
	return p.doEach(ctx, decide.FirstChores(p.jobsSnapshot()))
}

// undecidedSnapshot is what the chores of a pass that decides nothing are
// chosen from, as a paused pass's: a paused pass, or one that failed
// before its chores (a stuck Job still goes, an unpullable one still
// falls back or is stopped).
func (p *pass) undecidedSnapshot() decide.Snapshot {
	return decide.Snapshot{Deleting: !p.obj.GetDeletionTimestamp().IsZero(), JobActive: p.active != nil, Upkeep: p.upkeep(true)}
}

// doChores does the chores chosen after observing, in their order; the
// first that fails fails the pass. A pass does them once.
func (p *pass) doChores(ctx context.Context, chores []decide.Chore) error {
	p.choresDone = true
	return p.doEach(ctx, chores)
}

// doEach does chores in their order, up to the first that fails; a
// refused runner RBAC write fails the pass once the others are done.
func (p *pass) doEach(ctx context.Context, chores []decide.Chore) error {
	var rbac error
	for _, c := range chores {
		var err error
		switch c {
		case decide.ChoreBookkeep:
			err = p.bookkeep(ctx)
		case decide.ChoreCopyBackState:
			err = p.copyBack(ctx)
		case decide.ChoreReleaseEvacuation:
			err = p.releaseEvacuation(ctx)
		case decide.ChoreAdoptRetained:
			err = p.adoptRetained(ctx, p.retainedFrom())
		case decide.ChoreMakePlanKey:
			err = p.savePlanKey(ctx)
		case decide.ChoreRecordHeldExports:
			err = p.recordHold(ctx)
		case decide.ChoreDeleteStuckJob:
			err = p.deleteStuckJob(ctx)
		case decide.ChoreFallBackImage:
			err = p.fallBackImage(ctx)
		case decide.ChoreStopUnpulledJob:
			err = p.stopUnpulledJob(ctx)
		case decide.ChorePruneJobs:
			err = p.prune(ctx)
		case decide.ChoreConfirmNoResources:
			err = p.writeNoResources(ctx)
		case decide.ChoreReleaseSurplus:
			err = p.releaseSurplus(ctx)
		case decide.ChoreReownBackups:
			err = p.reownBackups(ctx)
		case decide.ChoreProtectDeleting:
			err = p.protectDeleting(ctx)
		case decide.ChoreReownState:
			err = p.reownState(ctx)
		case decide.ChoreBackUpState:
			err = p.backUp(ctx)
		case decide.ChoreSyncOwner:
			err = p.afterStep(ctx)
		case decide.ChoreSyncRemediation:
			err = p.syncRemediation(ctx)
		case decide.ChoreSyncPlans:
			err = p.writePlanMoves(ctx)
		case decide.ChorePrunePlans:
			err = p.plansWriter().Prune(ctx, p.plans)
		case decide.ChoreMirrorCredentials:
			err = p.mirrorCredentials(ctx)
		case decide.ChoreBindRunner:
			rbac = p.bindRunner(ctx)
		default:
			err = fmt.Errorf("unknown chore %q", c)
		}
		if err != nil {
			return errors.Join(err, rbac)
		}
	}
	return rbac
}
