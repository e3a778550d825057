package workspace

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/livereport"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

func cond(t string, s metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason}
}

// TestFailedPassKeepsObservedGeneration: a pass that failed part-way
// writes what it found, but vouches for no generation: status and
// conditions keep the last one a completed pass observed, so that a tool
// waiting for observedGeneration waits for a pass that saw everything.
func TestFailedPassKeepsObservedGeneration(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	tc := newCluster(t, "observed-generation", "c")
	role := roles.Cluster{}
	for _, step := range []struct {
		name    string
		ok      bool
		change  func(*infrav1.TerraformCluster)
		wantGen int64
		reason  string
	}{
		{name: "a completed pass", ok: true, wantGen: 1, reason: "First"},
		{name: "a failed pass over a new generation", ok: false, wantGen: 1, reason: "Second",
			change: func(tc *infrav1.TerraformCluster) { tc.Spec.Source.Image = "example.test/cluster:2" }},
		{name: "the next completed pass", ok: true, wantGen: 2, reason: "Third"},
	} {
		if step.change != nil {
			step.change(tc)
			if err := env.Client.Update(ctx, tc); err != nil {
				t.Fatal(err)
			}
		}
		p := &pass{e: &Engine{Client: env.Client}, role: role, obj: tc, w: role.View(tc), before: tc.DeepCopy()}
		p.set(cond(infrav1.DependenciesReadyCondition, metav1.ConditionTrue, step.reason))
		if err := p.patchStatus(ctx, step.ok); err != nil {
			t.Fatal(err)
		}
		got := &infrav1.TerraformCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tc), got); err != nil {
			t.Fatal(err)
		}
		c := meta.FindStatusCondition(got.Status.Conditions, infrav1.DependenciesReadyCondition)
		if got.Status.ObservedGeneration != step.wantGen || c == nil || c.ObservedGeneration != step.wantGen || c.Reason != step.reason {
			t.Errorf("%s: status.observedGeneration %d, condition %+v; want generation %d and reason %s (what the pass found is written)",
				step.name, got.Status.ObservedGeneration, c, step.wantGen, step.reason)
		}
		tc = got
	}
}

// poolPass is a pass over a provisioned pool whose state holds inputs
// hash h2:applied and whose applied record rendered exports E1.
func poolPass() *pass {
	tfvars := []byte(`{"bootstrap_data":"b","captf_cluster_outputs":{"network_id":"n-1"}}`)
	tmp := &infrav1.TerraformMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool"}}
	p := &pass{role: roles.MachinePool{}, obj: tmp, stored: stored{state: &state.State{}}}
	suffix, _ := state.Suffix("ns", state.KindMachinePool, "pool")
	p.stored.secrets = []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: state.SecretName(suffix),
		Annotations: map[string]string{infrav1.InputsHashAnnotation: "h2:applied"}}}}
	p.inputs.attempt = &records.Record{AppliedExports: inputs.ExportsHash(tfvars)}
	p.inputs.applied = &records.Record{InputsHash: "h2:applied", Tfvars: tfvars}
	return p
}

// A pool whose Jobs are gone (moved by clusterctl, or deleted) reports its
// last apply from the state: Ready must not wait for a Job that never runs.
func TestApplyReportedFromState(t *testing.T) {
	testCases := []struct {
		name   string
		change func(*pass)
		want   metav1.ConditionStatus
		reason string
		failed bool
	}{
		{"the pass failed", func(*pass) {}, metav1.ConditionUnknown, infrav1.NoApplyYetReason, true},
		{"the state holds the current inputs", func(*pass) {}, metav1.ConditionTrue, infrav1.ApplySucceededReason, false},
		{"the inputs changed since", func(p *pass) { p.inputs.hash = "h3:new" }, metav1.ConditionUnknown, infrav1.NoApplyYetReason, false},
		{"the state was not read", func(p *pass) { p.stored.state = nil }, metav1.ConditionUnknown, infrav1.NoApplyYetReason, false},
		{"a pool whose inputs cannot be built", func(p *pass) { p.inputs.hash = "" }, metav1.ConditionUnknown, infrav1.NoApplyYetReason, false},
		{"a machine never re-applies", func(p *pass) {
			p.role, p.obj, p.inputs.hash = roles.Machine{}, &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool"}}, ""
			suffix, _ := state.Suffix("ns", state.KindMachine, "pool")
			p.stored.secrets[0].Name = state.SecretName(suffix)
		}, metav1.ConditionTrue, infrav1.ApplySucceededReason, false},
		{"an apply's outcome is unconfirmed", func(p *pass) { p.inputs.attempt.UnconfirmedApply = "job-a2" }, metav1.ConditionUnknown, infrav1.NoApplyYetReason, false},
		{"a failed apply may have applied", func(p *pass) { p.inputs.attempt.MayHaveApplied = true }, metav1.ConditionUnknown, infrav1.NoApplyYetReason, false},
		{"a pool applied part of its exports", func(p *pass) { p.inputs.attempt.PartialExports = `{"job":"j"}` }, metav1.ConditionUnknown, infrav1.NoApplyYetReason, false},
		{"no attempt record", func(p *pass) { p.inputs.attempt = nil }, metav1.ConditionTrue, infrav1.ApplySucceededReason, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p := poolPass()
			p.inputs.hash = "h2:applied"
			tc.change(p)
			c := p.applyFromState(!tc.failed)
			if c.Type != infrav1.ApplyJobSucceededCondition || c.Status != tc.want || c.Reason != tc.reason {
				t.Fatalf("ApplyJobSucceeded = %+v, want %s %s", c, tc.want, tc.reason)
			}
		})
	}
}

// TestFirstVisit: every kind carries its health, drift and outputs
// conditions from its first pass, and a TerraformCluster also
// DeletionBlocked=False/NotBlocked (the reference's "set on first
// visit"), which neither a machine nor a pool carries.
func TestFirstVisit(t *testing.T) {
	for _, r := range []roles.Role{roles.Cluster{}, roles.Machine{}, roles.MachinePool{}} {
		t.Run(r.Kind(), func(t *testing.T) {
			conds := conditions.FirstVisit(r.Capabilities().Dependents)
			for _, want := range []string{infrav1.InfrastructureHealthyCondition, infrav1.DriftDetectedCondition, infrav1.DriftJobSucceededCondition, infrav1.OutputsValidCondition} {
				if c := meta.FindStatusCondition(conds, want); c == nil || c.Status != metav1.ConditionUnknown || c.Message == "" {
					t.Errorf("%s on the first visit = %+v, want Unknown with a message", want, c)
				}
			}
			blocked := meta.FindStatusCondition(conds, infrav1.DeletionBlockedCondition)
			switch {
			case r.Capabilities().Dependents && (blocked == nil || blocked.Status != metav1.ConditionFalse || blocked.Reason != infrav1.NotBlockedReason):
				t.Errorf("DeletionBlocked on a cluster's first visit = %+v, want False/NotBlocked", blocked)
			case !r.Capabilities().Dependents && blocked != nil:
				t.Errorf("a %s carries DeletionBlocked: %+v", r.Kind(), blocked)
			}
		})
	}
}

// TestLiveReportEnds: a live report (a wait before a Job, a Job held by
// its policy or by inputs over the cap, a running Job's pod that cannot
// pull its image) replaces the operation's condition; once a completed
// pass that reached its decision no longer reports it (the Job started,
// its image came, the hold is gone), the condition says again what it
// said before, however many live reports followed one another. A Job's
// outcome ends the episode: it stays. A failed pass, or one that stopped
// before deciding, leaves the live report; so does a manager that did not
// see it begin.
func TestLiveReportEnds(t *testing.T) {
	applied := metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason, Message: "Job a1: apply succeeded"}
	checked := metav1.Condition{Type: infrav1.DriftJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.DriftCheckedReason, Message: "Job d0 checked"}
	runsCond, _ := conditions.DriftJobRunning("d1", decide.OpDrift)
	runs := step{live: true, c: runsCond}
	driftFailedCond, _ := conditions.Job(conditions.JobFacts{Name: "d1", Op: decide.OpDrift, Summary: "plan failed"})
	read := metav1.Condition{Type: infrav1.StateReadableCondition, Status: metav1.ConditionTrue, Reason: infrav1.StateReadReason, Message: "Read serial 3"}
	locked := step{live: true, c: conditions.StateLocked("someone@laptop", "OperationTypeApply", "2026-12-05")}
	finding := conditions.DriftChecked(conditions.DriftFinding{Job: "d0", Detected: true, Update: 1, Remediates: true})
	remediating := step{live: true, c: conditions.DriftRemediating("r1")}
	resolved, _ := conditions.DriftAfterApply(conditions.ApplyAfterDrift{Job: "r1", Succeeded: true})
	on := func(t, reason string) step {
		return step{live: true, c: metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: reason, Message: "waits"}}
	}
	wait := func(reason string) step { return on(infrav1.ApplyJobSucceededCondition, reason) }
	pull := func(op decide.Operation) step {
		return step{live: true, c: conditions.ImagePullFailing("j", op, false, "example.test/m:1", "ErrImagePull", "not found")}
	}
	withdrawnApply := metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionFalse, Reason: infrav1.ApplyFailedReason, Message: "withdrawn"}
	stoppedCond, _ := conditions.Job(conditions.JobFacts{Name: "j", Op: decide.OpApply, ImagePullFailed: true, Image: "example.test/m:1"})
	stopped := step{c: stoppedCond}
	// A pass that ends the episode: completed, decided, reporting nothing
	// on the condition.
	quiet := step{}
	for _, tc := range []struct {
		name       string
		before     *metav1.Condition // on the status before the reports
		steps      []step            // one pass each, the last one the pass that looks
		restart    bool              // another manager runs the last pass
		condType   string
		wantReason string // "" : no condition
	}{
		{"after a slot wait, the last apply again", &applied, []step{wait(infrav1.WaitingForJobSlotReason), quiet}, false, "", infrav1.ApplySucceededReason},
		{"after a slot wait then a lease wait", &applied, []step{wait(infrav1.WaitingForJobSlotReason), wait(infrav1.WaitingForRunLeaseReason), quiet}, false, "", infrav1.ApplySucceededReason},
		{"a first apply: no apply yet", nil, []step{wait(infrav1.WaitingForClusterOperationReason), quiet}, false, "", infrav1.NoApplyYetReason},
		{"a destroy that waited for its credentials", &applied, []step{wait(infrav1.IdentityNotAllowedReason), quiet}, false, "", infrav1.ApplySucceededReason},
		{"another manager did not see the wait begin", &applied, []step{wait(infrav1.WaitingForJobSlotReason), quiet}, true, "", infrav1.WaitingForJobSlotReason},
		{"no wait: the condition stays", &applied, []step{quiet}, false, "", infrav1.ApplySucceededReason},
		{"a pass that waits again keeps the wait", &applied, []step{wait(infrav1.WaitingForJobSlotReason), wait(infrav1.WaitingForJobSlotReason)}, false, "", infrav1.WaitingForJobSlotReason},
		{"a failed pass leaves the wait", &applied, []step{wait(infrav1.WaitingForJobSlotReason), {failed: true}}, false, "", infrav1.WaitingForJobSlotReason},
		{"a pass that stopped before deciding leaves the wait", &applied, []step{wait(infrav1.WaitingForJobSlotReason), {undecided: true}}, false, "", infrav1.WaitingForJobSlotReason},
		{"then one that decides ends it", &applied, []step{wait(infrav1.WaitingForJobSlotReason), {undecided: true}, {failed: true}, quiet}, false, "", infrav1.ApplySucceededReason},
		{"an apply's image came: the last apply again", &applied, []step{pull(decide.OpApply), quiet}, false, "", infrav1.ApplySucceededReason},
		{"a slot wait, then an image that came", &applied, []step{wait(infrav1.WaitingForJobSlotReason), pull(decide.OpApply), quiet}, false, "", infrav1.ApplySucceededReason},
		{"a first apply's image came: no apply yet", nil, []step{pull(decide.OpApply), quiet}, false, "", infrav1.NoApplyYetReason},
		{"an image still not pulled stays reported", &applied, []step{pull(decide.OpApply), pull(decide.OpApply)}, false, "", infrav1.ImagePullFailedReason},
		{"a Job stopped for its image: its outcome stays", &applied, []step{pull(decide.OpApply), stopped, quiet}, false, "", infrav1.ImagePullFailedReason},
		{"the next Job's image came after one was stopped: that outcome again", &applied, []step{pull(decide.OpApply), stopped, pull(decide.OpApply), quiet}, false, "", infrav1.ImagePullFailedReason},
		{"a drift Job's image came: it runs", &checked, []step{runs, pull(decide.OpDrift), runs}, false, infrav1.DriftJobSucceededCondition, infrav1.DriftJobRunningReason},
		{"a drift Job deleted for a fallback image, nothing due: the last check again", &checked, []step{runs, pull(decide.OpDrift), quiet}, false, infrav1.DriftJobSucceededCondition, infrav1.DriftCheckedReason},
		{"a first drift Job gone without an outcome: not checked", nil, []step{runs, quiet}, false, infrav1.DriftJobSucceededCondition, infrav1.DriftNotCheckedReason},
		{"a drift Job's outcome stays", &checked, []step{runs, {c: driftFailedCond}, quiet}, false, infrav1.DriftJobSucceededCondition, infrav1.DriftJobFailedReason},
		{"another manager did not see the drift Job start", &checked, []step{runs, quiet}, true, infrav1.DriftJobSucceededCondition, infrav1.DriftJobRunningReason},
		{"a foreign lock released while a Job runs: the state read again", &read, []step{locked, quiet}, false, infrav1.StateReadableCondition, infrav1.StateReadReason},
		{"a foreign lock still held while a Job runs", &read, []step{locked, locked}, false, infrav1.StateReadableCondition, infrav1.StateLockedReason},
		{"the state read after the lock went", &read, []step{locked, {c: read}, quiet}, false, infrav1.StateReadableCondition, infrav1.StateReadReason},
		{"a remediation apply gone without an outcome: the finding again", &finding, []step{remediating, remediating, quiet}, false, infrav1.DriftDetectedCondition, infrav1.DriftPendingReason},
		{"a remediation apply's outcome stays", &finding, []step{remediating, {c: resolved}, quiet}, false, infrav1.DriftDetectedCondition, infrav1.NoDriftReason},
		{"another manager did not see the pull failure begin", &applied, []step{pull(decide.OpApply), quiet}, true, "", infrav1.ImagePullFailedReason},
		{"a restart over a wait, then an image that came: the image failure stays", &applied, []step{wait(infrav1.WaitingForJobSlotReason), {restart: true}, pull(decide.OpApply), quiet}, false, "", infrav1.ImagePullFailedReason},
		{"a first restore's wait and image: no result while it runs", nil, []step{on(infrav1.RestoreJobSucceededCondition, infrav1.WaitingForJobSlotReason), pull(decide.OpRestore), quiet}, false, infrav1.RestoreJobSucceededCondition, ""},
		{"a Job held by its policy, fixed", &applied, []step{{live: true, c: metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionFalse, Reason: infrav1.JobPolicyInvalidReason, Message: "lock timeout"}}, quiet}, false, "", infrav1.ApplySucceededReason},
		{"a restart that loaded the checkpoint: the last apply again", &applied, []step{wait(infrav1.WaitingForJobSlotReason), {handover: true}, quiet}, false, "", infrav1.ApplySucceededReason},
		{"a restart that loaded the checkpoint, a drift Job ran meanwhile: the check again", &checked, []step{runs, {handover: true}, runs, quiet}, false, infrav1.DriftJobSucceededCondition, infrav1.DriftCheckedReason},
		{"a loaded record older than a Job that finished since (by name: its finish time is earlier): the wait stays", &applied, []step{wait(infrav1.WaitingForJobSlotReason), {handover: true}, {jobDone: true}}, false, "", infrav1.WaitingForJobSlotReason},
		{"a record whose status write failed: the wait's record is kept", &applied, []step{wait(infrav1.WaitingForJobSlotReason), {c: withdrawnApply, unwritten: true}, quiet}, false, "", infrav1.ApplySucceededReason},
		{"inputs back under the cap", &applied, []step{{live: true, c: metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionFalse, Reason: infrav1.InputsTooLargeReason, Message: "2 MiB"}}, quiet}, false, "", infrav1.ApplySucceededReason},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}
			if tc.before != nil {
				tm.Status.Conditions = []metav1.Condition{*tc.before}
			}
			e := &Engine{}
			for i, s := range tc.steps {
				if s.restart || (tc.restart && i == len(tc.steps)-1) {
					e = &Engine{}
				}
				if s.handover {
					e = handOver(t, e)
					continue
				}
				p := &pass{e: e, role: roles.Machine{}, obj: tm, w: roles.Machine{}.View(tm), now: time.Now()}
				// Job a1 finished before every step; a2 after the first
				// (its clock says an hour before it).
				p.jobs = []batchv1.Job{finishedJob("a1", p.now.Add(-3*time.Hour))}
				if s.jobDone {
					p.jobs = append(p.jobs, finishedJob("a2", p.now.Add(-time.Hour)))
				}
				if !s.undecided {
					p.decided = &decide.Decision{}
				}
				s.report(p)
				st := &tm.Status.WorkspaceStatus
				if s.unwritten {
					p.endLiveReports(st.DeepCopy(), true) // its status write fails: nothing changes
					continue
				}
				endPass(p, st, !s.failed)
			}
			condType := tc.condType
			if condType == "" {
				condType = infrav1.ApplyJobSucceededCondition
			}
			got := meta.FindStatusCondition(tm.Status.Conditions, condType)
			switch {
			case tc.wantReason == "" && got != nil:
				t.Errorf("%s = %+v, want none", condType, got)
			case tc.wantReason != "" && (got == nil || got.Reason != tc.wantReason):
				t.Errorf("%s once the report ended = %+v, want reason %s", condType, got, tc.wantReason)
			}
		})
	}
}

// step is one pass: its report on an operation condition, live (a wait,
// a pull failure) or a Job's outcome, or none; whether it failed, or
// stopped before deciding; whether another manager runs it.
type step struct {
	live, failed, undecided, restart bool
	// handover: another manager takes over with what this one's
	// checkpoint saved (no pass); jobDone: the pass reads a Job that
	// finished after the live report began (whatever the clocks say).
	handover, jobDone bool
	// unwritten: the pass's status write fails.
	unwritten bool
	c         metav1.Condition
}

// handOver is the manager that starts after e with the live reports'
// records e's checkpoint saved.
func handOver(t *testing.T, e *Engine) *Engine {
	t.Helper()
	data, err := json.Marshal(e.live.Doc())
	if err != nil {
		t.Fatal(err)
	}
	var doc livereport.Doc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	next := &Engine{}
	next.live.Take(doc)
	return next
}

// finishedJob is a Job name of the object that succeeded at at.
func finishedJob(name string, at time.Time) batchv1.Job {
	return batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: batchv1.JobStatus{CompletionTime: &metav1.Time{Time: at},
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: at}}}}}
}

func (s step) report(p *pass) {
	switch {
	case s.c.Type == "":
	case s.live:
		p.reportLive(s.c)
	default:
		p.set(s.c)
	}
}

// TestProvisionedMachineOwnerRecovers: a provisioned TerraformMachine
// renders no inputs again, so the step that says DependenciesReady=True
// never runs for it; once an owner problem it reported is over, it says
// True again rather than keep the problem.
func TestProvisionedMachineOwnerRecovers(t *testing.T) {
	tm := &infrav1.TerraformMachine{}
	tm.Status.Initialization.Provisioned = ptr.To(true)
	tm.Status.Conditions = []metav1.Condition{{Type: infrav1.DependenciesReadyCondition, Status: metav1.ConditionFalse, Reason: infrav1.OwnerMismatchReason}}
	p := &pass{e: &Engine{}, role: roles.Machine{}, obj: tm, w: roles.Machine{}.View(tm)}
	p.owner.NotReady = &tm.Status.Conditions[0]
	if err := p.buildInputs(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c := p.reported(infrav1.DependenciesReadyCondition); c != nil {
		t.Errorf("while the owner problem lasts, the inputs step reports %+v", c)
	}
	p = &pass{e: &Engine{}, role: roles.Machine{}, obj: tm, w: roles.Machine{}.View(tm)}
	if err := p.buildInputs(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c := p.current(infrav1.DependenciesReadyCondition); c.Status != metav1.ConditionTrue {
		t.Errorf("DependenciesReady once the owner is fine = %+v, want True", c)
	}
	// Said on every pass that runs the step: a True as it was, and one a
	// move left without the condition (clusterctl moves no status).
	said := metav1.Condition{Type: infrav1.DependenciesReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.DependenciesReadyReason, Message: "Everything the inputs need is there"}
	for _, had := range [][]metav1.Condition{{said}, nil} {
		tm.Status.Conditions = had
		p = &pass{e: &Engine{}, role: roles.Machine{}, obj: tm, w: roles.Machine{}.View(tm)}
		if err := p.buildInputs(t.Context()); err != nil {
			t.Fatal(err)
		}
		c := p.reported(infrav1.DependenciesReadyCondition)
		if c == nil || c.Status != metav1.ConditionTrue || (had != nil && *c != said) {
			t.Errorf("a provisioned machine that had %v says %+v, want True (as it was)", had, c)
		}
	}
}

// TestWithdrawnRestoreRequest: a restore request for a backup that was
// not found reports RestoreBackupNotFound; once the request is withdrawn
// (the annotation removed), the condition goes: it said nothing of a
// restore. A failed restore's stays, its serial re-armed.
func TestWithdrawnRestoreRequest(t *testing.T) {
	for reason, drops := range map[string]bool{infrav1.RestoreBackupNotFoundReason: true, infrav1.RestoreFailedReason: false, infrav1.StateRestoredReason: false} {
		t.Run(reason, func(t *testing.T) {
			tc := &infrav1.TerraformCluster{}
			tc.Status.LastRestoredSerial = 4
			tc.Status.Conditions = []metav1.Condition{{Type: infrav1.RestoreJobSucceededCondition, Status: metav1.ConditionFalse, Reason: reason}}
			p := &pass{e: &Engine{}, role: roles.Cluster{}, obj: tc, w: roles.Cluster{}.View(tc)}
			if err := p.restoreRequest(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(p.dropped, infrav1.RestoreJobSucceededCondition); got != drops {
				t.Errorf("RestoreJobSucceeded %s dropped: %t, want %t", reason, got, drops)
			}
			if rearmed := tc.Status.LastRestoredSerial == 0; rearmed != (reason == infrav1.RestoreFailedReason) {
				t.Errorf("serial re-armed: %t after %s", rearmed, reason)
			}
		})
	}
}

// TestAnotherRestoreRequestEndsTheBackupNotFound: a request whose backup
// was not found said so; once the request names a serial restored already
// (or a backup that is found), that stale "not found" goes, where it used
// to stay until a restore Job reported; nor is it the record a wait of the
// same pass covers (a wait that ended would say it again). A request
// still not a serial says so again.
func TestAnotherRestoreRequestEndsTheBackupNotFound(t *testing.T) {
	for value, drops := range map[string]bool{"4": true, "latest": false} {
		t.Run(value, func(t *testing.T) {
			tc := &infrav1.TerraformCluster{}
			tc.Annotations = map[string]string{infrav1.RestoreStateAnnotation: value}
			tc.Status.LastRestoredSerial = 4
			tc.Status.Conditions = []metav1.Condition{{Type: infrav1.RestoreJobSucceededCondition, Status: metav1.ConditionFalse, Reason: infrav1.RestoreBackupNotFoundReason,
				Message: "No complete state backup has serial 9; status.stateBackups lists the ones that can be restored"}}
			p := &pass{e: &Engine{}, role: roles.Cluster{}, obj: tc, w: roles.Cluster{}.View(tc)}
			if err := p.restoreRequest(t.Context()); err != nil {
				t.Fatal(err)
			}
			if drops {
				p.reportLive(metav1.Condition{Type: infrav1.RestoreJobSucceededCondition, Status: metav1.ConditionUnknown, Reason: infrav1.WaitingForJobSlotReason})
				rec, ok := p.e.live.Get(livereport.Key{UID: tc.UID, Type: infrav1.RestoreJobSucceededCondition})
				if !ok || rec.Cond.Reason == infrav1.RestoreBackupNotFoundReason {
					t.Errorf("the wait of the pass that dropped the stale RestoreBackupNotFound covers %+v", rec)
				}
				p.conds = nil
			}
			endPass(p, &tc.Status.WorkspaceStatus, true)
			c := meta.FindStatusCondition(tc.Status.Conditions, infrav1.RestoreJobSucceededCondition)
			switch {
			case drops && c != nil:
				t.Errorf("restore-state=%s: RestoreJobSucceeded still says %q", value, c.Message)
			case !drops && (c == nil || c.Reason != infrav1.RestoreBackupNotFoundReason || !strings.Contains(c.Message, `"latest" is not a state serial`)):
				t.Errorf("restore-state=%s: RestoreJobSucceeded = %+v, want what this request lacks", value, c)
			}
		})
	}
}

// TestDeletionBlockedSaysWhatWasCounted: a deleting cluster's count of
// its machines and pools says what holds the deletion, whatever the pass
// decides next (a Job of its own may still run, so that the table waits
// for it before the dependents). DeletionBlocked used to keep saying
// NotBlocked then, machines there or not.
func TestDeletionBlockedSaysWhatWasCounted(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	tc := newCluster(t, "blocked-count", "c")
	tc.Status.Conditions = []metav1.Condition{conditions.NotBlocked}
	tm := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Namespace: tc.Namespace, Name: "m-0", Labels: map[string]string{infrav1.ClusterNameLabel: "demo"}},
		Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: "example.test/machine:1"}}}
	if err := env.Client.Create(ctx, tm); err != nil {
		t.Fatal(err)
	}
	count := func() *metav1.Condition {
		t.Helper()
		p := &pass{e: &Engine{Client: env.Client, APIReader: env.Client}, role: roles.Cluster{}, obj: tc, w: roles.Cluster{}.View(tc)}
		p.owner.ClusterName = "demo"
		if err := p.countDependents(ctx); err != nil {
			t.Fatal(err)
		}
		endPass(p, &tc.Status.WorkspaceStatus, true)
		return meta.FindStatusCondition(tc.Status.Conditions, infrav1.DeletionBlockedCondition)
	}
	if c := count(); c == nil || c.Status != metav1.ConditionTrue || c.Reason != infrav1.DependentsExistReason || !strings.Contains(c.Message, "TerraformMachine m-0") {
		t.Fatalf("with machine m-0: DeletionBlocked = %+v, want True/DependentsExist naming it", c)
	}
	if err := env.Client.Delete(ctx, tm); err != nil {
		t.Fatal(err)
	}
	if c := count(); c == nil || c.Status != metav1.ConditionFalse || c.Reason != infrav1.NotBlockedReason {
		t.Fatalf("with no machine left: DeletionBlocked = %+v, want False/NotBlocked", c)
	}
}

// TestDriftFindingFollowsTheAction: a TerraformCluster whose finding said
// a remediation was due, switched to drift.action Report, says at its next
// pass that nothing is changed (it used to say "remediation due" until the
// next drift check), and back; a deleting one, which never remediates,
// keeps it.
func TestDriftFindingFollowsTheAction(t *testing.T) {
	tc := &infrav1.TerraformCluster{Spec: infrav1.TerraformClusterSpec{Drift: &infrav1.ClusterDriftSpec{Action: infrav1.DriftActionReport}}}
	tc.Status.Conditions = []metav1.Condition{conditions.DriftChecked(conditions.DriftFinding{Job: "d1", Detected: true, Delete: 1, Remediates: true})}
	for _, step := range []struct {
		action infrav1.DriftAction
		want   string
	}{{infrav1.DriftActionReport, infrav1.DriftReportedReason}, {infrav1.DriftActionRemediate, infrav1.DriftPendingReason}} {
		tc.Spec.Drift.Action = step.action
		p := &pass{e: &Engine{}, role: roles.Cluster{}, obj: tc, w: roles.Cluster{}.View(tc)}
		p.eff = roles.Resolve(p.role.Kind(), p.w, nil, 0)
		p.driftFollowsAction(true)
		if c := p.reported(infrav1.DriftDetectedCondition); c != nil {
			t.Fatalf("a deleting object's finding changed: %+v; it never remediates", c)
		}
		p.driftFollowsAction(false)
		c := p.reported(infrav1.DriftDetectedCondition)
		if c == nil || c.Reason != step.want || !strings.HasPrefix(c.Message, "The last drift check found drift: 0 to create, 0 to update, 0 to replace, 1 to delete") {
			t.Fatalf("with drift.action %s the finding says %+v, want %s with the finding", step.action, c, step.want)
		}
		tc.Status.Conditions = conditions.Status(conditions.Pass{Previous: tc.Status.Conditions, Reported: p.conds, FromState: conditions.NoApplyYet})
	}
}

// TestApprovedApplyEndsTheWait: a change waiting for its plan's approval
// (the plan Job's PlanAwaitingApproval, a blocked apply's
// DestructivePlanBlocked) is said while the plan waits, whatever the pass
// decides (another Job may run meanwhile); once approved, the apply that
// starts (after a gate's wait, maybe) ends it: while it runs,
// ApplyJobSucceeded says what it said before the plan. It used to say
// "approve it" for the whole run of the approved apply. A manager that
// did not see the plan come leaves the wait until the Job reports.
func TestApprovedApplyEndsTheWait(t *testing.T) {
	blocked, _ := conditions.Job(conditions.JobFacts{Name: "a2", Op: decide.OpApply, Kind: infrav1.RunErrorBlocked})
	planned, _ := conditions.Job(conditions.JobFacts{Name: "p1", Op: decide.OpPlan, Succeeded: true})
	applied := metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason, Message: "Job a1 applied the current inputs"}
	gate := metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionUnknown, Reason: infrav1.WaitingForMachineOperationsReason, Message: "waits for m-0"}
	plan := func(phase infrav1.PlanPhase) []infrav1.TerraformPlan {
		return []infrav1.TerraformPlan{{ObjectMeta: metav1.ObjectMeta{Name: "demo-x", Labels: map[string]string{infrav1.PlanPhaseLabel: string(phase)}}}}
	}
	type pass1 struct {
		report  *metav1.Condition // what the pass's steps reported on ApplyJobSucceeded
		plans   []infrav1.TerraformPlan
		restart bool
		want    string // its reason once written
	}
	for _, tc := range []struct {
		name   string
		before *metav1.Condition
		passes []pass1
	}{
		{"a blocked apply, approved", &applied, []pass1{
			{report: &blocked, plans: plan(infrav1.PlanPhasePending), want: infrav1.DestructivePlanBlockedReason},
			{plans: plan(infrav1.PlanPhasePending), want: infrav1.DestructivePlanBlockedReason}, // a drift Job runs
			{report: &gate, plans: plan(infrav1.PlanPhaseApproved), want: infrav1.WaitingForMachineOperationsReason},
			{plans: plan(infrav1.PlanPhaseApproved), want: infrav1.ApplySucceededReason}, // the approved apply runs
		}},
		{"a first Manual plan, approved", nil, []pass1{
			{report: &planned, plans: plan(infrav1.PlanPhasePending), want: infrav1.PlanAwaitingApprovalReason},
			{plans: plan(infrav1.PlanPhaseApproved), want: infrav1.NoApplyYetReason},
		}},
		{"another manager did not see the plan come", &applied, []pass1{
			{report: &blocked, plans: plan(infrav1.PlanPhasePending), want: infrav1.DestructivePlanBlockedReason},
			{plans: plan(infrav1.PlanPhaseApproved), restart: true, want: infrav1.DestructivePlanBlockedReason},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc2 := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}
			if tc.before != nil {
				tc2.Status.Conditions = []metav1.Condition{*tc.before}
			}
			e := &Engine{}
			for i, ps := range tc.passes {
				if ps.restart {
					e = &Engine{}
				}
				p := &pass{e: e, role: roles.Cluster{}, obj: tc2, w: roles.Cluster{}.View(tc2), plans: ps.plans, decided: &decide.Decision{}}
				if ps.report != nil {
					p.report(*ps.report)
				}
				p.approvalAwaited()
				endPass(p, &tc2.Status.WorkspaceStatus, true)
				if c := meta.FindStatusCondition(tc2.Status.Conditions, infrav1.ApplyJobSucceededCondition); c == nil || c.Reason != ps.want {
					t.Fatalf("pass %d: ApplyJobSucceeded = %+v, want %s", i+1, c, ps.want)
				}
			}
		})
	}
}
