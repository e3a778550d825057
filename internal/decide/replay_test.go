package decide

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"captf.io/captf/internal/test/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/decisions.golden from this run")

// replay is one object as a sequence of passes sees it: the snapshot the
// next pass observes, changed by the steps of a scenario as the engine's
// acts and the world would change it, and the log of every decision.
type replay struct {
	s    Snapshot
	last Decision
	// first are the pass's first chores, done before it observed the rest.
	first []Chore
	log   *strings.Builder
}

// pass decides on the current snapshot and logs the decision after what
// happened before it; a Job it starts is running at the next pass.
func (r *replay) pass(what string) {
	r.first = FirstChores(r.s)
	r.done(r.first)
	if r.s.Upkeep.Paused {
		r.paused(what)
		return
	}
	r.last = Decide(r.s)
	d := r.last
	line := fmt.Sprintf("%-58s -> %s", what, d.Action)
	if d.Op != "" {
		line += " " + string(d.Op)
	}
	line += " " + string(d.Reason)
	if d.Requeue > 0 {
		line += " (again in " + d.Requeue.Round(time.Second).String() + ")"
	}
	r.logLine(line)
	if d.Action == ActionStartJob {
		r.s.JobActive = true
	}
}

// paused logs a paused pass: it decides nothing, and only prunes.
func (r *replay) paused(what string) {
	line := fmt.Sprintf("%-58s -> paused, nothing decided", what)
	r.logLine(line)
}

// logLine logs a pass's line with the chores it does, and changes the
// snapshot as they change the world.
func (r *replay) logLine(line string) {
	chores := Chores(r.s)
	for i, c := range append(r.first, chores...) {
		if i == 0 {
			line += " +"
		}
		line += " " + string(c)
	}
	fmt.Fprintln(r.log, "  "+line)
	r.done(chores)
}

// done changes the snapshot as the chores done change the world.
func (r *replay) done(chores []Chore) {
	u := &r.s.Upkeep
	for _, c := range chores {
		switch c {
		case ChoreRecordVanishedJob:
			// The vanished Job was the last started; an apply's outcome
			// is unknown from now on.
			u.VanishedJob = false
			r.s.UnconfirmedApply = r.s.UnconfirmedApply || r.last.Op == OpApply
		case ChoreBookkeep:
			u.Unbookkept = 0
		case ChoreDeleteStuckJob:
			u.StuckJob = false
		case ChoreFallBackImage:
			u.FallbackJob = false
		case ChoreMirrorCredentials:
			u.MirrorDue = false
		case ChoreBindRunner:
			u.RunnerUnbound = false
		case ChoreConfirmNoResources:
			u.NoResourcesConfirmed = false
		case ChorePruneJobs:
			u.PrunableJobs = 0
		case ChoreReleaseSurplus:
			u.SurplusPieces = 0
		case ChoreReownState:
			u.StraySecrets = false
		case ChoreBackUpState:
			u.BackedUp = true
		case ChoreSyncPlans:
			u.PlanMoves = 0
		}
	}
}

// jobTakes is how long every Job of the replay runs.
const jobTakes = time.Minute

// finish ends the running Job as ok says, a minute after it started, with
// what its success changes in the world; change sets what else it
// reported.
func (r *replay) finish(ok bool, change func(*FinishedJob)) {
	r.wait(jobTakes)
	j := FinishedJob{Name: fmt.Sprintf("%s-%d", r.last.Op, len(r.s.History)+1), Op: r.last.Op, Succeeded: ok,
		FinishedAt: r.s.Now, InputsHash: r.s.InputsHash, Remediation: r.last.Reason == ReasonDriftRemediation}
	if change != nil {
		change(&j)
	}
	r.s.History = append(r.s.History, j)
	r.s.JobActive = false
	r.s.Upkeep.Unbookkept++
	if !ok || j.Blocked {
		return
	}
	switch j.Op {
	case OpApply, OpRestore:
		r.s.Upkeep.StateSerial++
		r.s.Upkeep.BackedUp = false
	}
	switch j.Op {
	case OpApply:
		r.s.State, r.s.StateInputsHash, r.s.EverApplied, r.s.UnconfirmedApply = StateReadable, j.InputsHash, true, false
		r.s.Schedule.LastSuccessfulApply = r.s.Now
		r.s.DriftFound = false
	case OpRefresh:
		r.s.Schedule.LastRefresh = r.s.Now
	case OpDrift:
		r.s.Schedule.LastDriftCheck = r.s.Now
	case OpRestore:
		r.s.State, r.s.RestoreRequested = StateReadable, false
	case OpDestroy:
		r.s.State = StateAbsent
	}
}

func (r *replay) wait(d time.Duration) { r.s.Now = r.s.Now.Add(d) }

// fresh is a new mutable object: no state yet, inputs ready.
func fresh() Snapshot {
	return Snapshot{Now: t0, Mutable: true, State: StateAbsent, InputsHash: "h3:1", FailedJobsHistoryLimit: 3,
		Schedule: Schedule{UID: "6f1c", CreatedAt: t0}}
}

// scenarios are the sequences the log replays: each a user's path
// through the lifecycle, crashes and all.
var scenarios = []struct {
	name string
	run  func(r *replay)
}{
	{"a cluster provisions, takes a change that fails once, and is deleted", func(r *replay) {
		r.pass("created")
		r.finish(true, nil)
		r.pass("the apply succeeded")
		r.s.InputsHash = "h3:2"
		r.pass("an input changed")
		r.finish(false, nil)
		r.pass("the apply failed")
		r.wait(30 * time.Second)
		r.pass("30s later")
		r.wait(time.Minute)
		r.pass("the backoff is over")
		r.finish(true, nil)
		r.pass("the retry succeeded")
		r.s.Deleting = true
		r.pass("deleted")
		r.finish(false, nil)
		r.pass("the destroy failed")
		r.wait(2 * time.Minute)
		r.pass("the backoff is over")
		r.finish(true, nil)
		r.pass("the destroy succeeded")
	}},
	{"the first object of a namespace mirrors its credentials and binds the runner before its first Job", func(r *replay) {
		r.s.Upkeep.MirrorDue, r.s.Upkeep.RunnerUnbound = true, true
		r.pass("created; no mirror nor runner account in the namespace")
		r.finish(true, nil)
		r.pass("the apply succeeded")
	}},
	{"a deleting cluster waits for its machines, then is retained", func(r *replay) {
		r.s.State, r.s.StateInputsHash, r.s.EverApplied = StateReadable, "h3:1", true
		r.s.Deleting, r.s.Dependents = true, 2
		r.pass("deleted with two machines")
		r.s.Dependents = 0
		r.s.Retain = true
		r.pass("the machines are gone; deletionPolicy Retain")
	}},
	{"the manager dies between an apply and its outcome", func(r *replay) {
		r.pass("created")
		r.s.JobActive, r.s.Upkeep.VanishedJob = false, true
		r.pass("the Job vanished, no state was written")
		r.s.State, r.s.StateInputsHash = StateReadable, "h3:1"
		r.pass("a state of these inputs is there after all")
		r.finish(true, nil)
		r.pass("the re-apply succeeded")
	}},
	{"the user confirms that an apply whose outcome is unknown created nothing", func(r *replay) {
		r.pass("created")
		r.s.JobActive, r.s.Upkeep.VanishedJob = false, true
		r.pass("the Job vanished, no state was written")
		r.s.UnconfirmedApply, r.s.Upkeep.NoResourcesConfirmed = false, true
		r.pass("captf.io/confirm-no-resources names it")
		r.finish(true, nil)
		r.pass("the new apply succeeded")
	}},
	{"a Job whose pod never started is deleted as stuck, and another starts", func(r *replay) {
		r.pass("created")
		r.s.JobActive, r.s.Upkeep.StuckJob = false, true
		r.pass("a minute on, no pod ran and the per-run Secret is gone")
		r.finish(true, nil)
		r.pass("the new apply succeeded")
	}},
	{"a drift check whose pinned image cannot be pulled falls back to the next one", func(r *replay) {
		r.s.State, r.s.StateInputsHash, r.s.EverApplied = StateReadable, "h3:1", true
		r.s.Schedule.LastSuccessfulApply, r.s.Schedule.DriftInterval = t0, time.Hour
		r.wait(2 * time.Hour)
		r.pass("the drift check is due")
		r.wait(5 * time.Minute)
		r.s.JobActive, r.s.Upkeep.FallbackJob = false, true
		r.pass("its pod could not pull the pinned digest in the grace")
		r.finish(true, nil)
		r.pass("the check with the recorded tag found no drift")
	}},
	{"a state that is lost holds everything until a restore", func(r *replay) {
		r.s.EverApplied = true
		r.pass("the state Secrets are gone")
		r.s.RestoreRequested = true
		r.pass("a restore is requested")
		r.finish(true, nil)
		r.s.StateInputsHash = "h3:1"
		r.pass("the restore succeeded")
	}},
	{"applyPolicy Manual plans, waits for approval, applies", func(r *replay) {
		r.s.State, r.s.StateInputsHash, r.s.EverApplied, r.s.Manual = StateReadable, "h3:1", true, true
		r.s.InputsHash = "h3:2"
		r.pass("an input changed")
		r.finish(true, func(j *FinishedJob) { j.PlanHash = "p2:a" })
		r.s.Plan = PlanPending
		r.pass("the plan is a Pending TerraformPlan")
		r.s.Plan, r.s.Upkeep.PlanMoves = PlanApproved, 1
		r.pass("approved")
		r.finish(true, nil)
		r.s.Plan = PlanNone
		r.pass("the apply succeeded")
	}},
	{"a destructive change stops until approved", func(r *replay) {
		r.s.State, r.s.StateInputsHash, r.s.EverApplied = StateReadable, "h3:1", true
		r.s.InputsHash = "h3:2"
		r.pass("an input changed")
		r.finish(true, func(j *FinishedJob) { j.Blocked, j.PlanHash = true, "p2:b" })
		r.s.PendingPlan = true
		r.pass("the guard stopped before a replace")
		r.wait(time.Hour)
		r.pass("an hour later")
		r.s.PendingPlan, r.s.ApprovedPlan = false, true
		r.pass("approved")
		r.finish(true, nil)
		r.s.ApprovedPlan = false
		r.pass("the approved apply succeeded")
	}},
	{"drift is found, remediated, and a failing remediation stops at the cap", func(r *replay) {
		r.s.State, r.s.StateInputsHash, r.s.EverApplied = StateReadable, "h3:1", true
		r.s.Schedule.LastSuccessfulApply, r.s.Schedule.DriftInterval = t0, time.Hour
		r.pass("up to date, drift checks hourly")
		r.wait(2 * time.Hour)
		r.pass("two hours later")
		r.finish(true, nil)
		r.s.DriftFound, r.s.Remediate = true, true
		r.pass("the check found drift; remediation is on")
		for i := 1; i <= 3; i++ {
			r.finish(false, nil)
			r.wait(15 * time.Minute)
			r.pass(fmt.Sprintf("remediation %d failed, 15m later", i))
		}
	}},
	{"a machine's state is backed up, re-owned and protected; its remediation request follows its health", func(r *replay) {
		r.s.Mutable, r.s.Upkeep.Remediates = false, true
		r.pass("created")
		r.finish(true, nil)
		r.s.Upkeep.Provisioned = true
		r.pass("the apply succeeded: serial 1, provisioned")
		r.pass("the next pass")
		r.s.Upkeep.StraySecrets = true
		r.pass("a state chunk lost its owner reference")
		r.s.Upkeep.PrunableJobs = 1
		r.s.Upkeep.Paused = true
		r.pass("paused, a finished Job beyond the history limit")
		r.s.Upkeep.Paused = false
		r.s.Deleting, r.s.Upkeep.SurplusPieces = true, 1
		r.pass("deleted; the state read left a deleted piece out")
		r.finish(true, nil)
		r.pass("the destroy succeeded")
	}},
	{"a machine never re-applies, a pool refreshes until its members settle", func(r *replay) {
		r.s.Mutable = false
		r.s.State, r.s.StateInputsHash, r.s.EverApplied = StateReadable, "h3:1", true
		r.s.InputsHash = "h3:2"
		r.pass("a machine's rendered inputs differ from its state's")
		r.s.Mutable, r.s.Upkeep.SyncsOwner = true, true
		r.s.InputsHash = "h3:1"
		r.s.Schedule.LastSuccessfulApply = t0
		r.s.Schedule.MembershipConverging, r.s.Schedule.MembershipInterval = true, 10*time.Minute
		r.pass("a pool whose members do not match its replicas")
		r.wait(time.Minute)
		r.pass("a minute later")
		r.finish(true, nil)
		r.s.Schedule.MembershipConverging = false
		r.pass("the refresh found them settled")
	}},
}

// TestReplay feeds each scenario's snapshots through Decide and compares
// the decisions with testdata/decisions.golden, so that a change of
// behaviour shows as a diff of that log in review. Run with -update to
// rewrite it, then read the diff.
func TestReplay(t *testing.T) {
	var log strings.Builder
	for _, sc := range scenarios {
		fmt.Fprintf(&log, "%s:\n", sc.name)
		sc.run(&replay{s: fresh(), log: &log})
	}
	golden.Check(t, filepath.Join("testdata", "decisions.golden"), log.String(), "decisions", *update)
}
