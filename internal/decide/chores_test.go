package decide

import (
	"slices"
	"testing"
)

func TestChores(t *testing.T) {
	// idle is base, of a kind that syncs its owner and remediates, with
	// its state backed up: only the owner sync runs, as on every pass with
	// a readable state.
	idle := func() Snapshot {
		s := base()
		s.Upkeep = Upkeep{StateSerial: 4, BackedUp: true, SyncsOwner: true, Remediates: true}
		return s
	}
	testCases := []struct {
		name   string
		change func(*Snapshot)
		want   []Chore
	}{
		{"an idle object syncs its owner", func(*Snapshot) {}, []Chore{ChoreSyncOwner}},
		{"a kind without an after-step or remediation has no chore", func(s *Snapshot) {
			s.Upkeep.SyncsOwner, s.Upkeep.Remediates, s.Upkeep.Provisioned = false, false, true
		}, nil},
		{"a kind that only remediates syncs its request once provisioned", func(s *Snapshot) {
			s.Upkeep.SyncsOwner, s.Upkeep.Provisioned = false, true
		}, []Chore{ChoreSyncRemediation}},
		{"a provisioned one also syncs its remediation request", func(s *Snapshot) { s.Upkeep.Provisioned = true },
			[]Chore{ChoreSyncOwner, ChoreSyncRemediation}},
		{"a new serial is backed up before the owner sync", func(s *Snapshot) { s.Upkeep.BackedUp = false },
			[]Chore{ChoreBackUpState, ChoreSyncOwner}},
		{"an empty state (serial 0) has nothing to back up", func(s *Snapshot) { s.Upkeep.StateSerial, s.Upkeep.BackedUp = 0, false },
			[]Chore{ChoreSyncOwner}},
		{"every chore of a live object, in order", func(s *Snapshot) {
			s.Upkeep = Upkeep{PrunableJobs: 2, StrayBackups: true, SurplusPieces: 1, StraySecrets: true, StateSerial: 5, Provisioned: true, SyncsOwner: true, Remediates: true}
		}, []Chore{ChorePruneJobs, ChoreReownBackups, ChoreReleaseSurplus, ChoreReownState, ChoreBackUpState, ChoreSyncOwner, ChoreSyncRemediation}},
		{"a paused object only prunes", func(s *Snapshot) {
			s.Upkeep = Upkeep{Paused: true, PrunableJobs: 1, StrayBackups: true, SurplusPieces: 1, StraySecrets: true, StateSerial: 5, Provisioned: true}
		}, []Chore{ChorePruneJobs}},
		{"the plans' chores come last", func(s *Snapshot) {
			s.Upkeep.BackedUp, s.Upkeep.PlanMoves, s.Upkeep.PrunablePlans = false, 2, 1
		}, []Chore{ChoreBackUpState, ChoreSyncOwner, ChoreSyncPlans, ChorePrunePlans}},
		{"a paused object prunes its Jobs and records its plans' approvals", func(s *Snapshot) {
			s.Upkeep = Upkeep{Paused: true, PrunableJobs: 1, StraySecrets: true, StateSerial: 5, PlanMoves: 1}
		}, []Chore{ChorePruneJobs, ChoreSyncPlans}},
		{"a running Job's object still records approvals", func(s *Snapshot) { s.JobActive, s.Upkeep.PlanMoves = true, 1 },
			[]Chore{ChoreSyncPlans}},
		{"a deleting object records approvals after protecting its state", func(s *Snapshot) { s.Deleting, s.Upkeep.PlanMoves = true, 1 },
			[]Chore{ChoreProtectDeleting, ChoreSyncPlans}},
		{"a stuck Job goes first, and the state is kept as if it were gone", func(s *Snapshot) {
			s.Upkeep.StuckJob, s.Upkeep.PrunableJobs, s.Upkeep.BackedUp = true, 1, false
		}, []Chore{ChoreDeleteStuckJob, ChorePruneJobs, ChoreBackUpState, ChoreSyncOwner}},
		{"a paused object's stuck Job goes too", func(s *Snapshot) { s.Upkeep.Paused, s.Upkeep.StuckJob = true, true },
			[]Chore{ChoreDeleteStuckJob}},
		{"a running Job that cannot pull its image is stopped, paused or not", func(s *Snapshot) {
			s.JobActive, s.Upkeep.Paused, s.Upkeep.UnpulledJob, s.Upkeep.PrunableJobs = true, true, true, 1
		}, []Chore{ChoreStopUnpulledJob, ChorePruneJobs}},
		{"a Job whose image cannot be pulled falls back to the next image, paused or not", func(s *Snapshot) {
			s.Upkeep.Paused, s.Upkeep.FallbackJob, s.Upkeep.PrunableJobs = true, true, 1
		}, []Chore{ChoreFallBackImage, ChorePruneJobs}},
		{"the fallback's Job is gone for the decision: the state is kept as if no Job ran", func(s *Snapshot) {
			s.Upkeep.FallbackJob, s.Upkeep.BackedUp = true, false
		}, []Chore{ChoreFallBackImage, ChoreBackUpState, ChoreSyncOwner}},
		{"the runner's RBAC is written before every other chore", func(s *Snapshot) {
			s.Upkeep.BackedUp, s.Upkeep.PlanMoves, s.Upkeep.RunnerUnbound = false, 1, true
		}, []Chore{ChoreBindRunner, ChoreBackUpState, ChoreSyncOwner, ChoreSyncPlans}},
		{"the credentials (mirror, then runner RBAC) are written first, then the Jobs' chores", func(s *Snapshot) {
			s.Upkeep.MirrorDue, s.Upkeep.RunnerUnbound, s.Upkeep.PrunablePlans, s.Upkeep.StuckJob, s.Upkeep.PlanKeyUnsaved = true, true, 1, true, true
		}, []Chore{ChoreMirrorCredentials, ChoreBindRunner, ChoreDeleteStuckJob, ChoreMakePlanKey, ChoreSyncOwner, ChorePrunePlans}},
		{"a stuck Job goes before the plan key is written: a refused key must not keep it", func(s *Snapshot) {
			s.Upkeep.PlanKeyUnsaved, s.Upkeep.StuckJob, s.Upkeep.PrunableJobs = true, true, 1
		}, []Chore{ChoreDeleteStuckJob, ChorePruneJobs, ChoreMakePlanKey, ChoreSyncOwner}},
		{"the plan key the pass made is written after the credentials, before the plans", func(s *Snapshot) {
			s.Upkeep.PlanKeyUnsaved, s.Upkeep.MirrorDue, s.Upkeep.PlanMoves = true, true, 1
		}, []Chore{ChoreMirrorCredentials, ChoreMakePlanKey, ChoreSyncOwner, ChoreSyncPlans}},
		{"a deleting object's plan key too, while a Job runs", func(s *Snapshot) {
			s.Deleting, s.JobActive, s.Upkeep.PlanKeyUnsaved = true, true, true
		}, []Chore{ChoreMakePlanKey}},
		{"a pool's held exports change is recorded after the credentials, also while deleting", func(s *Snapshot) {
			s.Deleting, s.Upkeep.HoldDue, s.Upkeep.PlanKeyUnsaved = true, true, true
		}, []Chore{ChoreMakePlanKey, ChoreRecordHeldExports, ChoreProtectDeleting}},
		{"an unreadable state still gets its credentials written", func(s *Snapshot) {
			s.State, s.Upkeep.MirrorDue = StateUnreadable, true
		}, []Chore{ChoreMirrorCredentials}},
		{"the runner's RBAC is written while a Job runs too", func(s *Snapshot) { s.JobActive, s.Upkeep.RunnerUnbound = true, true },
			[]Chore{ChoreBindRunner}},
		{"not while paused, nor for a deleting object (its Job's start writes them)", func(s *Snapshot) {
			s.Upkeep.Paused, s.Upkeep.MirrorDue, s.Upkeep.RunnerUnbound = true, true, true
		}, nil},
		{"a confirmation that an apply created nothing is written first, also while a Job runs", func(s *Snapshot) {
			s.JobActive, s.Upkeep.NoResourcesConfirmed, s.Upkeep.StrayBackups = true, true, true
		}, []Chore{ChoreConfirmNoResources, ChoreReownBackups}},
		{"a destroyed object protects nothing: its cleanup lets go of it all", func(s *Snapshot) {
			s.Deleting, s.State, s.DestroyReportedAt, s.Upkeep.SurplusPieces = true, StateAbsent, t0, 1
		}, []Chore{ChoreReleaseSurplus}},
		{"and for a deleting object, before its state is protected", func(s *Snapshot) { s.Deleting, s.Upkeep.NoResourcesConfirmed = true, true },
			[]Chore{ChoreConfirmNoResources, ChoreProtectDeleting}},
		{"not while paused: the pass does not read it", func(s *Snapshot) { s.Upkeep.Paused, s.Upkeep.NoResourcesConfirmed = true, true }, nil},
		{"a paused object with nothing to prune does nothing", func(s *Snapshot) { s.Upkeep.Paused = true }, nil},
		{"a running Job leaves the state Secrets and owner alone", func(s *Snapshot) {
			s.JobActive, s.Upkeep = true, Upkeep{PrunableJobs: 1, StraySecrets: true, StateSerial: 5, Provisioned: true}
		}, []Chore{ChorePruneJobs}},
		{"a retained state is neither released, re-owned nor backed up; stray backups a restore request read are re-owned", func(s *Snapshot) {
			s.State, s.Upkeep = StateRetained, Upkeep{StrayBackups: true, SurplusPieces: 1, StraySecrets: true}
		}, []Chore{ChoreReownBackups}},
		{"a deleting object is protected, never re-owned, backed up or synced", func(s *Snapshot) {
			s.Deleting, s.Upkeep = true, Upkeep{PrunableJobs: 1, StrayBackups: true, SurplusPieces: 1, StraySecrets: true, StateSerial: 5, Provisioned: true}
		}, []Chore{ChorePruneJobs, ChoreReownBackups, ChoreReleaseSurplus, ChoreProtectDeleting}},
		{"a deleting object whose Job runs is left alone", func(s *Snapshot) {
			s.Deleting, s.JobActive, s.Upkeep.MirrorDue, s.Upkeep.RunnerUnbound = true, true, true, true
		}, nil},
		{"a deleting object without state is still protected", func(s *Snapshot) { s.Deleting, s.State = true, StateAbsent },
			[]Chore{ChoreProtectDeleting}},
		{"an unreadable state is re-owned, not backed up or synced", func(s *Snapshot) {
			s.State, s.Upkeep = StateUnreadable, Upkeep{StraySecrets: true, Provisioned: true, SyncsOwner: true, Remediates: true}
		}, []Chore{ChoreReownState}},
		{"no state: no owner sync", func(s *Snapshot) { s.State = StateAbsent }, nil},
		{"an owner that does not reference the object back is not synced; the state is still kept", func(s *Snapshot) {
			s.OwnerMismatch, s.Upkeep = true, Upkeep{StraySecrets: true, StateSerial: 5, Provisioned: true, SyncsOwner: true, Remediates: true}
		}, []Chore{ChoreReownState, ChoreBackUpState}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s := idle()
			tc.change(&s)
			if got := Chores(s); !slices.Equal(got, tc.want) {
				t.Errorf("Chores = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFirstChores: a vanished Job is recorded, an evacuated state copied
// back and finished Jobs bookkept first, paused, deleting, or while
// another Job runs; a retained state is adopted once no Job runs; no
// other chore is a first one, whatever else the snapshot holds.
func TestFirstChores(t *testing.T) {
	testCases := []struct {
		name string
		s    Snapshot
		want []Chore
	}{
		{"nothing finished", Snapshot{Upkeep: Upkeep{PrunableJobs: 2, StraySecrets: true, StateSerial: 5, PlanMoves: 1}}, nil},
		{"a deleting object protects its state later, not first", Snapshot{Deleting: true, State: StateReadable}, nil},
		{"two finished Jobs", Snapshot{Upkeep: Upkeep{Unbookkept: 2, PrunableJobs: 1, StraySecrets: true}}, []Chore{ChoreBookkeep}},
		{"paused", Snapshot{Upkeep: Upkeep{Paused: true, Unbookkept: 1}}, []Chore{ChoreBookkeep}},
		{"deleting", Snapshot{Deleting: true, Upkeep: Upkeep{Unbookkept: 1}}, []Chore{ChoreBookkeep}},
		{"while the next Job runs", Snapshot{JobActive: true, Upkeep: Upkeep{Unbookkept: 1, StuckJob: true}}, []Chore{ChoreBookkeep}},
		{"an evacuated state is copied back, then the evacuation namespace being deleted let go, before bookkeeping", Snapshot{Deleting: true,
			Upkeep: Upkeep{Unbookkept: 1, EvacuatedCopy: true, EvacuationEnding: true}}, []Chore{ChoreCopyBackState, ChoreReleaseEvacuation, ChoreBookkeep}},
		{"nothing of the evacuation while a Job runs", Snapshot{Deleting: true, JobActive: true,
			Upkeep: Upkeep{EvacuatedCopy: true, EvacuationEnding: true}}, nil},
		{"a retained state the object adopts", Snapshot{State: StateRetained, Upkeep: Upkeep{AdoptsRetained: true, StraySecrets: true}}, []Chore{ChoreAdoptRetained}},
		{"a retained state the object does not adopt", Snapshot{State: StateRetained, Upkeep: Upkeep{StraySecrets: true}}, nil},
		{"a deleting object adopts too", Snapshot{Deleting: true, State: StateRetained, Upkeep: Upkeep{AdoptsRetained: true}}, []Chore{ChoreAdoptRetained}},
		{"not while a Job runs", Snapshot{JobActive: true, State: StateRetained, Upkeep: Upkeep{AdoptsRetained: true}}, nil},
		{"a vanished Job is recorded first, paused or deleting, even while its successor's Job runs", Snapshot{Deleting: true, JobActive: true,
			Upkeep: Upkeep{Paused: true, VanishedJob: true, Unbookkept: 1}}, []Chore{ChoreRecordVanishedJob, ChoreBookkeep}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := FirstChores(tc.s); !slices.Equal(got, tc.want) {
				t.Errorf("FirstChores = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFailsLast: only the credentials chores, written first, let the
// chores after them be done when they fail; any other failure stops the
// pass's chores there (a plan key not written stops what it keys; a copy
// back that cannot be made holds the object).
func TestFailsLast(t *testing.T) {
	for c, want := range map[Chore]bool{
		ChoreMirrorCredentials: true, ChoreBindRunner: true,
		ChoreMakePlanKey: false, ChoreRecordHeldExports: false, ChoreRecordVanishedJob: false, ChoreCopyBackState: false, ChoreBookkeep: false, ChoreDeleteStuckJob: false, ChoreSyncPlans: false,
	} {
		if got := c.FailsLast(); got != want {
			t.Errorf("%s.FailsLast() = %v, want %v", c, got, want)
		}
	}
}
