package workspace

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/guard"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/runnerrbac"
)

// Requeue intervals of the waits act reports.
const (
	// PolicyRequeue re-checks an invalid jobs policy, inputs over the cap
	// or missing records.
	PolicyRequeue = decide.PolicyRequeue
	// ReleaseRequeue re-checks a release deferred for a held run lease.
	ReleaseRequeue = 5 * time.Second
)

// snapshot gathers what Decide needs from the pass.
func (p *pass) snapshot(deleting bool) decide.Snapshot {
	g, history := p.guard(), p.history()
	s := decide.Snapshot{
		Now: p.now, Mutable: p.role.Mutable(), Deleting: deleting,
		Retain:    p.eff.DeletionPolicy == infrav1.DeletionPolicyRetain,
		JobActive: p.active != nil, State: p.stateStatus(), StateInputsHash: p.stateInputsHash(),
		EverApplied: p.everApplied(), UnconfirmedApply: p.unconfirmed() != "", RescueRecorded: p.inputs.attempt != nil && p.inputs.attempt.RescuedSerial != "", DriftFound: p.driftFound(), Remediate: p.remediates(), ApprovedPlan: g.Approved() != nil, PendingPlan: g.Pending() != nil, Manual: p.manual(), Plan: g.PlanStatus(history), InputsHash: p.inputs.hash, RestoreRequested: p.stored.restore != nil,
		FailedJobsHistoryLimit: int(p.eff.Policy.FailedJobsHistoryLimit),
		Timing:                 p.e.Options.Timing,
		Schedule: decide.Schedule{
			UID: string(p.obj.GetUID()), CreatedAt: p.obj.GetCreationTimestamp().Time,
			DriftInterval: p.eff.DriftInterval, MembershipInterval: p.eff.MembershipInterval,
		},
	}
	if p.inputs.tooLarge != nil {
		s.InputsHash, s.InputsTooLarge = "", true
	}
	s.OwnerMismatch = p.owner.Mismatch
	s.DeletionPolicyUnresolved = deleting && p.eff.DeletionPolicy == ""
	if deleting {
		s.DestroyReportedAt = p.destroyReportedAt()
	}
	s.PolicyInvalid = p.eff.Policy.Validate() != nil
	s.SecurityInvalid = p.eff.Policy.ValidateSecurity() != nil
	s.NamespaceTerminating = p.nsTerminating
	if !deleting {
		s.CredentialsNotReady = !p.creds.Ready || !p.rbac.ready
	}
	// What a Job other than an apply, plan or restore renders (a destroy
	// renders the same record, or the same current inputs, when there is
	// one at all).
	rec, _ := p.recordFor(decide.OpRefresh)
	s.DurableInputsMissing = rec == nil
	s.RecordedIdentity = rec != nil && rec.Identity != "" && p.otherIdentity(rec.Identity, rec.IdentityKind)
	s.Evacuation = p.e.Options.Evacuation
	if deleting && p.caps().Dependents {
		s.Dependents = len(p.dependentNames)
	}
	s.History = history
	for _, fj := range s.History {
		if fj.Succeeded && fj.Op == decide.OpApply && fj.FinishedAt.After(s.Schedule.LastSuccessfulApply) {
			s.Schedule.LastSuccessfulApply = fj.FinishedAt
		}
	}
	if t := p.w.Status.LastRefresh; t != nil {
		s.Schedule.LastRefresh = t.Time
	}
	if t := p.w.Status.LastDriftCheck; t != nil {
		s.Schedule.LastDriftCheck = t.Time
	}
	s.Schedule.HealthPending = int(p.w.Status.PendingRefreshes)
	if r, ok := p.remediator(); ok {
		s.Schedule.HealthCheckInterval = r.HealthCheckInterval(p.obj, p.owner)
	}
	s.Schedule.MembershipConverging = p.role.View(p.obj).MembershipConverging
	s.Schedule.RefreshAfterApplyDue = p.refreshAfterApplyDue(s.Schedule.LastSuccessfulApply)
	return s
}

// history is what the decision table knows of the object's finished
// Jobs (guard.History); a blocked apply's plan not found yet makes the
// pass look again once it should be.
func (p *pass) history() []decide.FinishedJob {
	out, lookAgain := guard.History(p.jobs, p.keying(), p.plans, p.obj.GetName(), p.now)
	if lookAgain > 0 {
		p.lookAgainIn(lookAgain)
	}
	return out
}

// refreshAfterApplyDue: a machine's or pool's successful apply whose own
// health reading was pending has not been followed by a refresh yet.
func (p *pass) refreshAfterApplyDue(lastApply time.Time) bool {
	if !p.caps().RefreshesAfterApply || lastApply.IsZero() || p.contract == nil || !p.contract.HealthPending() {
		return false
	}
	return p.w.Status.LastRefresh == nil || p.w.Status.LastRefresh.Time.Before(lastApply)
}

// decideAndAct runs the credentials step, decides, does the chores chosen
// from the same snapshot, and does exactly one thing.
func (p *pass) decideAndAct(ctx context.Context, deleting bool) (ctrl.Result, error) {
	if deleting && p.caps().Dependents {
		if err := p.countDependents(ctx); err != nil {
			return ctrl.Result{}, err
		}
	}
	if !deleting {
		if err := p.credentialsStep(ctx); err != nil {
			// No Job starts, but the chores do not wait for the
			// credentials: the state is still backed up, a Machine's
			// remediation request and a pool's size still written.
			return ctrl.Result{}, errors.Join(err, p.doChores(ctx, decide.Chores(p.choreSnapshot(deleting))))
		}
	}
	p.driftFollowsAction(deleting)
	p.approvalAwaited()
	s := p.choreSnapshot(deleting)
	d := decide.Decide(s)
	ephemeral := p.inputs.ephemeral
	if err := p.doChores(ctx, decide.Chores(s)); err != nil {
		return ctrl.Result{}, err
	}
	if (!deleting && s.CredentialsNotReady != (!p.creds.Ready || !p.rbac.ready)) || p.inputs.ephemeral != ephemeral {
		// A credentials chore could not write what the decision took as
		// written, or the namespace refused the plan key (its stored h2
		// hashes now compare as dropped): the pass decides again on what
		// it now knows.
		d = decide.Decide(p.snapshot(deleting))
	}
	p.decided = &d
	ctrl.LoggerFrom(ctx).V(1).Info("Decided", "action", d.Action, "op", d.Op, "reason", d.Reason, "requeue", d.Requeue)
	op := string(d.Op)
	if op == "" {
		op = "none"
	}
	metrics.Decisions.WithLabelValues(p.role.Kind(), op, string(d.Reason)).Inc()
	p.reportInputsApplied(d, deleting)
	if d.Action == decide.ActionRelease || d.Action == decide.ActionRetain {
		// Never release while a Job the cache has not shown yet holds the
		// run lease: it may be writing the state.
		if held, err := p.runLeaseHeld(ctx); err != nil || held {
			return ctrl.Result{RequeueAfter: ReleaseRequeue}, err
		}
	}
	switch d.Action {
	case decide.ActionStartJob:
		return p.startJob(ctx, d, deleting)
	case decide.ActionRelease:
		return ctrl.Result{}, p.release(ctx, d)
	case decide.ActionRetain:
		return ctrl.Result{}, p.retain(ctx)
	}
	p.reportWait(d)
	if p.soonest > 0 && (d.Requeue == 0 || p.soonest < d.Requeue) {
		d.Requeue = p.soonest
	}
	return ctrl.Result{RequeueAfter: d.Requeue}, nil
}

// otherIdentity: a Job running with this identity is not running with the
// one whose credentials the pass checked.
func (p *pass) otherIdentity(name string, kind infrav1.IdentityKind) bool {
	return name != p.creds.Identity || kind != p.creds.Kind
}

// credentialsStep resolves the identity, mirrors it and sets up the
// runner's RBAC; a deleting object does it only before its Job.
func (p *pass) credentialsStep(ctx context.Context) error {
	return p.credentialsWith(ctx, p.eff.IdentityRef)
}

// credentialsFor is the credentials step for a recorded identity ("" for
// the object's current one).
func (p *pass) credentialsFor(ctx context.Context, name string, kind infrav1.IdentityKind) error {
	if name == "" {
		return p.credentialsStep(ctx)
	}
	// A record made before identity kinds were recorded names a
	// TerraformClusterIdentity, as credentials.Resolve takes a kind left
	// empty.
	return p.credentialsWith(ctx, &infrav1.IdentityReference{Name: name, Kind: kind})
}

// The step only reads; what it finds missing, the chores MirrorCredentials
// and BindRunner write. The decision takes the credentials as ready once
// written, but their conditions say so only once they are: a condition
// that would be True after a write is reported by the write.
func (p *pass) credentialsWith(ctx context.Context, ref *infrav1.IdentityReference) error {
	var err error
	p.rbac.binding, p.rbac.ready = runnerrbac.Binding{}, false
	if p.creds, err = credentials.Resolve(ctx, p.e.client(), p.e.APIReader, p.obj, ref); err != nil {
		return fmt.Errorf("checking the identity: %w", err)
	}
	// A mirror due is written, and said, by the chore MirrorCredentials
	// (or by startJob) in the same pass.
	p.stepRan(conditions.StepCredentials)
	for _, c := range p.creds.Conditions {
		if c.Type != infrav1.CredentialsMirroredCondition || !p.creds.MirrorDue() {
			p.set(c)
		}
	}
	if !p.creds.Ready {
		return nil
	}
	p.rbac.binding, err = runnerrbac.Check(ctx, p.e.client(), p.runNamespace(), p.runnerAccount())
	if !p.rbac.binding.Due() || !p.rbac.binding.Ready() {
		p.set(p.rbac.binding.Condition())
	}
	if err == nil {
		// A binding due is written, and said, by the chore BindRunner (or
		// by startJob) in the same pass.
		p.stepRan(conditions.StepRunnerRBAC)
	}
	p.rbac.ready = p.rbac.binding.Ready()
	return err
}

// bindRunner (the chore BindRunner, and the action's own credentials step)
// writes the runner RBAC the credentials step found missing. A write that
// fails leaves the runner not ready, so the pass starts no Job.
func (p *pass) bindRunner(ctx context.Context) error {
	if !p.rbac.binding.Due() {
		return nil
	}
	cond, err := p.rbac.binding.Write(ctx, p.e.client())
	p.set(cond)
	p.rbac.ready = cond.Status == metav1.ConditionTrue
	if err == nil {
		p.rbac.binding = runnerrbac.Binding{} // written: nothing is due
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		// The namespace is going and takes no new account: the condition
		// says so, and the object's own deletion follows; not a pass error
		// to log and retry.
		return nil
	}
	return err
}

// reportWait reports a wait on the condition it concerns (the rules are
// conditions.Wait's).
func (p *pass) reportWait(d decide.Decision) {
	if d.Reason == decide.Backoff(decide.ReasonDriftRemediation) {
		p.remediationBackingOff(d.Requeue)
	}
	f := conditions.WaitFacts{Message: p.waitMessage(d), TooLarge: p.inputs.tooLarge}
	if d.Reason == decide.ReasonJobPolicyInvalid {
		f.InsecurePolicy, f.InvalidPolicy = p.eff.Policy.ValidateSecurity(), p.eff.Policy.Validate()
	}
	if c := p.current(infrav1.ApplyJobSucceededCondition); c != nil {
		f.ApplyReason = c.Reason
	}
	for _, r := range conditions.Wait(d, f) {
		p.report(r)
	}
}

// waitMessage is the prose of a wait that has its own, from what the pass
// read.
func (p *pass) waitMessage(d decide.Decision) string {
	switch d.Reason {
	case decide.ReasonDurableInputsMissing:
		return conditions.DurableInputsMissingMessage(records.AttemptName(p.role.Kind(), p.obj.GetName()), d.Op)
	case decide.ReasonNamespaceTerminating:
		return p.namespaceTerminatingMessage(d.Op)
	case decide.ReasonPlanAwaitingApproval:
		return p.guard().AwaitingMessage()
	case decide.ReasonStateRescued:
		serial := jobs.RescuedSerial(p.jobs)
		if a := p.inputs.attempt; serial == "" && a != nil {
			serial = a.RescuedSerial
		}
		return conditions.StateRescuedMessage(serial)
	case decide.ReasonAwaitingApproval:
		return p.guard().BlockedMessage()
	}
	return ""
}

// reportInputsApplied sets InputsApplied, for tools that wait on it.
func (p *pass) reportInputsApplied(d decide.Decision, deleting bool) {
	f := conditions.InputsFacts{Deleting: deleting, StateObserved: p.stored.state != nil || p.stored.err != nil,
		InputsBuilt: p.inputs.hash != "", InState: p.inputsInState()}
	if p.active != nil {
		f.JobRunning, f.ActiveOp, f.ActiveJob = true, jobs.Op(p.active), p.active.Name
	}
	if p.inputs.held != nil {
		f.HeldPlan = p.inputs.held.Plan
	}
	if c, ok := conditions.InputsApplied(f, d); ok {
		p.set(c)
	}
}

// recordFor picks the inputs a destroy, refresh or drift renders
// (records.Rendered), the records keyed.
func (p *pass) recordFor(op decide.Operation) (*records.Record, bool) {
	var current *records.Record
	if p.inputs.hash != "" {
		current = &records.Record{MainTF: p.inputs.mainTF, Tfvars: p.inputs.tfvars, InputsHash: p.inputs.hash, Image: p.w.Source.Image}
	}
	return records.Rendered(op == decide.OpDestroy, p.role.Mutable(), current, p.keying().Record(p.inputs.attempt), p.keying().Record(p.inputs.applied), p.stateInputsHash())
}

// mirrorCredentials (the chore MirrorCredentials, and the action's own
// credentials step) writes the mirror the credentials step found due, or
// deletes the one of a namespace the identity no longer allows. A write
// that fails says so on CredentialsMirrored (MirrorFailed) and leaves the
// credentials not ready, so the pass starts no Job, as when the step
// found them wanting.
func (p *pass) mirrorCredentials(ctx context.Context) error {
	rewrote, reason, note, err := p.creds.Write(ctx, p.e.client(), p.e.APIReader, p.obj)
	if err != nil {
		return err
	}
	if reason != "" {
		p.eventf(corev1.EventTypeNormal, reason, "%s", note)
	}
	if rewrote {
		for _, cond := range p.creds.Conditions {
			p.set(cond)
		}
	}
	return nil
}
