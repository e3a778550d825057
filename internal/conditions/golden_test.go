package conditions

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/test/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/reports.golden from this run")

// reports is every report the rules can make, each from named facts:
// what a user reads on the object's conditions and events, verbatim.
func reports() []struct {
	name string
	got  func() ([]metav1.Condition, []Event)
} {
	conds := func(c ...metav1.Condition) ([]metav1.Condition, []Event) { return c, nil }
	job := func(f JobFacts) func() ([]metav1.Condition, []Event) {
		return func() ([]metav1.Condition, []Event) {
			c, ev := Job(f)
			return []metav1.Condition{c}, []Event{ev}
		}
	}
	wait := func(r decide.Reason, op decide.Operation, f WaitFacts) func() ([]metav1.Condition, []Event) {
		return func() ([]metav1.Condition, []Event) {
			return Wait(decide.Decision{Action: decide.ActionWait, Op: op, Reason: r}, f), nil
		}
	}
	inputsApplied := func(f InputsFacts, r decide.Reason) func() ([]metav1.Condition, []Event) {
		return func() ([]metav1.Condition, []Event) {
			c, ok := InputsApplied(f, decide.Decision{Action: decide.ActionWait, Reason: r})
			if !ok {
				return nil, nil
			}
			return []metav1.Condition{c}, nil
		}
	}
	const name = "captf-c-demo-apply-a1-0abc12"
	ended := JobFacts{Name: name, Op: decide.OpApply, DeadlineSeconds: 3600, Image: "registry.example/net:v1", Summary: "step apply: Error: quota exceeded"}
	with := func(change func(*JobFacts)) JobFacts {
		f := ended
		change(&f)
		f.Name = strings.Replace(f.Name, "-apply-", "-"+string(f.Op)+"-", 1)
		return f
	}
	state := StateFacts{Secret: "tfstate-default-c-demo-0a1b2c3d"}
	withState := func(change func(*StateFacts)) StateFacts { f := state; change(&f); return f }
	found := DriftChecked(DriftFinding{Job: "d", Detected: true, Update: 1, Delete: 1, Resources: []string{"aws_instance.a", "aws_sg.b"}, Remediates: true})
	return []struct {
		name string
		got  func() ([]metav1.Condition, []Event)
	}{
		{"lifecycle: live", func() ([]metav1.Condition, []Event) { return Lifecycle(false, false), nil }},
		{"lifecycle: deleting while paused", func() ([]metav1.Condition, []Event) { return Lifecycle(true, true), nil }},
		{"first visit of a cluster", func() ([]metav1.Condition, []Event) { return FirstVisit(true), nil }},
		{"no apply yet", func() ([]metav1.Condition, []Event) { return conds(NoApplyYet) }},
		{"ready", func() ([]metav1.Condition, []Event) {
			return conds(Ready([]metav1.Condition{{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionTrue}}, ReadyInputs(true, false)))
		}},
		{"not ready", func() ([]metav1.Condition, []Event) {
			return conds(Ready([]metav1.Condition{{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionFalse, Reason: infrav1.ApplyFailedReason}}, ReadyInputs(false, false)))
		}},
		{"inputs applied", inputsApplied(InputsFacts{StateObserved: true, InputsBuilt: true, InState: true}, decide.ReasonUpToDate)},
		{"inputs held for approval", inputsApplied(InputsFacts{StateObserved: true, InputsBuilt: true, HeldPlan: "tfmp-pool-0abc"}, decide.ReasonUpToDate)},
		{"inputs backing off", inputsApplied(InputsFacts{StateObserved: true, InputsBuilt: true}, decide.Backoff(decide.ReasonInputsChanged))},
		{"wait: durable inputs missing for a destroy", wait(decide.ReasonDurableInputsMissing, decide.OpDestroy,
			WaitFacts{Message: DurableInputsMissingMessage("captf-inputs-c-demo", decide.OpDestroy)})},
		{"wait: durable inputs missing for a refresh", wait(decide.ReasonDurableInputsMissing, decide.OpRefresh,
			WaitFacts{Message: DurableInputsMissingMessage("captf-inputs-c-demo", decide.OpRefresh)})},
		{"wait: the namespace is being deleted", wait(decide.ReasonNamespaceTerminating, decide.OpDestroy,
			WaitFacts{Message: NamespaceTerminatingMessage("team-a", "tfstate-default-c-demo-0a1b2c3d", infrav1.StateProtectionFinalizer, decide.OpDestroy, true)})},
		{"wait: the namespace is being deleted, and the manager watches one namespace", wait(decide.ReasonNamespaceTerminating, decide.OpDestroy,
			WaitFacts{Message: NamespaceTerminatingMessage("team-a", "tfstate-default-c-demo-0a1b2c3d", infrav1.StateProtectionFinalizer, decide.OpDestroy, false)})},
		{"wait: a rescued state waits for its restore", wait(decide.ReasonStateRescued, decide.OpApply, WaitFacts{Message: StateRescuedMessage("7")})},
		{"wait: insecure jobs policy", wait(decide.ReasonJobPolicyInvalid, decide.OpApply, WaitFacts{InsecurePolicy: errors.New("spec.jobs.podSecurityContext.runAsNonRoot: must not be false")})},
		{"wait: deletion policy unresolved", wait(decide.ReasonDeletionPolicyUnresolved, decide.OpDestroy, WaitFacts{})},
		{"wait at a Job's start: no Job slot", wait(decide.ReasonWaitingForJobSlot, decide.OpApply, WaitFacts{Message: "(the gate's message)"})},
		{"wait at a Job's start: the run lease", wait(decide.ReasonWaitingForRunLease, decide.OpRefresh, WaitFacts{Message: "(the gate's message)"})},
		{"wait at a Job's start: the cluster's operation", wait(decide.ReasonWaitingForClusterOperation, decide.OpApply, WaitFacts{Message: "(the gate's message)"})},
		{"wait at a Job's start: the machines' operations", wait(decide.ReasonWaitingForMachineOps, decide.OpDestroy, WaitFacts{Message: "(the gate's message)"})},
		{"wait at a Job's start: a recorded identity", wait(decide.ReasonIdentityNotAllowed, decide.OpDrift, WaitFacts{Message: "(the engine's message)"})},
		{"wait at a Job's start: a runtime that cannot keep the state", wait(decide.ReasonRuntimeCannotKeepState, decide.OpApply, WaitFacts{Message: "(the engine's message)"})},
		{"wait at a Job's start: a runtime not known yet", wait(decide.ReasonRuntimeNotKnown, decide.OpApply, WaitFacts{Message: "(the engine's message)"})},
		{"wait at a Job's start: the Job refused", wait(decide.ReasonJobRefused, decide.OpRestore, WaitFacts{Message: "(the engine's message)"})},
		{"wait: inputs over the cap", wait(decide.ReasonUpToDate, decide.OpApply, WaitFacts{TooLarge: errors.New("the inputs are 1.2 MiB, over the 1 MiB cap")})},
		{"job: apply succeeded", job(with(func(f *JobFacts) { f.Succeeded = true }))},
		{"job: plan awaiting approval", job(with(func(f *JobFacts) { f.Op, f.Succeeded = decide.OpPlan, true }))},
		{"job: plan unreadable", job(with(func(f *JobFacts) { f.Op, f.Succeeded, f.PlanUnreadable = decide.OpPlan, true, true }))},
		{"job: image pull failed", job(with(func(f *JobFacts) { f.ImagePullFailed = true }))},
		{"job: runner image pull failed", job(with(func(f *JobFacts) {
			f.ImagePullFailed, f.RunnerImage, f.Image = true, true, "registry.example/captf-manager:v0.4.0"
		}))},
		{"job: deadline", job(with(func(f *JobFacts) { f.Deadline = true }))},
		{"job: interrupted destroy", job(with(func(f *JobFacts) { f.Op, f.Kind = decide.OpDestroy, infrav1.RunErrorInterrupted }))},
		{"job: image contract broken", job(with(func(f *JobFacts) { f.Kind, f.Summary = infrav1.RunErrorImageLayout, "/module/main.tf is missing" }))},
		{"job: destructive plan blocked", job(with(func(f *JobFacts) { f.Kind = infrav1.RunErrorBlocked }))},
		{"job: approved plan changed", job(with(func(f *JobFacts) { f.Kind = infrav1.RunErrorPlanChanged }))},
		{"job: failed", job(with(func(f *JobFacts) { f.Kind = infrav1.RunErrorStep }))},
		{"job: started, provisioning", func() ([]metav1.Condition, []Event) { return JobStarted(name, decide.OpApply, true), nil }},
		{"job: started, a drift check", func() ([]metav1.Condition, []Event) { return JobStarted(name, decide.OpDrift, false), nil }},
		{"job: image pull failing", func() ([]metav1.Condition, []Event) {
			return conds(ImagePullFailing(name, decide.OpApply, false, "registry.example/net:v1", "ErrImagePull", "manifest unknown"))
		}},
		{"job: runner image pull failing", func() ([]metav1.Condition, []Event) {
			return conds(ImagePullFailing(name, decide.OpApply, true, "registry.example/captf-manager:v0.4.0", "ImagePullBackOff", "Back-off pulling image"))
		}},
		{"job: an apply vanished", func() ([]metav1.Condition, []Event) {
			c, ev := JobVanished(name, decide.OpApply)
			return []metav1.Condition{c}, []Event{ev}
		}},
		{"state: locked", func() ([]metav1.Condition, []Event) {
			return conds(StateLocked("alice@laptop", "OperationTypeApply", "2026-12-04 09:12:01.5 +0000 UTC"))
		}},
		{"state: read", func() ([]metav1.Condition, []Event) {
			return conds(StateReadable(withState(func(f *StateFacts) { f.Read, f.Serial, f.Resources, f.CompressedBytes = true, 7, 3, 2048 })))
		}},
		{"state: retained", func() ([]metav1.Condition, []Event) {
			return conds(StateReadable(withState(func(f *StateFacts) { f.RetainedFrom = "5d0c2a1e" })))
		}},
		{"state: lost", func() ([]metav1.Condition, []Event) {
			return conds(StateReadable(withState(func(f *StateFacts) { f.NotFound, f.EverApplied = true, true })))
		}},
		{"state: apply outcome unknown, deleting", func() ([]metav1.Condition, []Event) {
			return conds(StateReadable(withState(func(f *StateFacts) { f.NotFound, f.UnconfirmedJob, f.Deleting = true, name, true })))
		}},
		{"state: deleted by the cleanup after the destroy", func() ([]metav1.Condition, []Event) {
			return conds(StateReadable(withState(func(f *StateFacts) { f.NotFound, f.EverApplied, f.Deleting, f.Destroyed = true, true, true, true })))
		}},
		{"state: unreadable", func() ([]metav1.Condition, []Event) {
			return conds(StateReadable(withState(func(f *StateFacts) { f.Unreadable = infrav1.StateEncryptedReason })))
		}},
		{"dependencies: met", func() ([]metav1.Condition, []Event) { return conds(DependenciesMet) }},
		{"dependencies: rendered when provisioned", func() ([]metav1.Condition, []Event) { return conds(DependenciesRendered(nil)) }},
		{"dependencies: a variables source not found", func() ([]metav1.Condition, []Event) {
			return conds(InputsUnavailable(SourceNotFound, "(the inputs' error)"))
		}},
		{"dependencies: invalid variables", func() ([]metav1.Condition, []Event) {
			return conds(InputsUnavailable(VariablesInvalid, "(the inputs' error)"))
		}},
		{"dependencies: waiting for the cluster's exports", func() ([]metav1.Condition, []Event) {
			return conds(InputsUnavailable(WaitingForExports, "(the inputs' error)"))
		}},
		{"dependencies: waiting for bootstrap data", func() ([]metav1.Condition, []Event) {
			return conds(InputsUnavailable(WaitingForBootstrap, "(the inputs' error)"))
		}},
		{"apply: a pool's exports change held", func() ([]metav1.Condition, []Event) { return conds(ExportsHeld("(the engine's message)")) }},
		{"apply: the last apply said again, succeeded", func() ([]metav1.Condition, []Event) {
			return conds(AppliedBefore(decide.FinishedJob{Name: name, Succeeded: true}, "the change planned (TerraformPlan tfp-c-0abc) was withdrawn"))
		}},
		{"apply: the last apply said again, failed", func() ([]metav1.Condition, []Event) {
			return conds(AppliedBefore(decide.FinishedJob{Name: name}, "the change planned (TerraformPlan tfp-c-0abc) was withdrawn"))
		}},
		{"apply: no Job kept, the state holds the inputs", func() ([]metav1.Condition, []Event) { return conds(AppliedInState(7)) }},
		{"restore: the backup is not found", func() ([]metav1.Condition, []Event) {
			return conds(RestoreBackupNotFound("(the engine's message)"))
		}},
		{"health: a null provider_id, first reading", func() ([]metav1.Condition, []Event) { return conds(ProviderIDHealth(nil, true)) }},
		{"health: a null provider_id, second reading", func() ([]metav1.Condition, []Event) {
			first := ProviderIDHealth(nil, true)
			return conds(ProviderIDHealth(&first, true))
		}},
		{"drift: found, to remediate", func() ([]metav1.Condition, []Event) { return conds(found) }},
		{"drift: remediation backing off", func() ([]metav1.Condition, []Event) {
			return conds(DriftBackingOff(found, time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)))
		}},
		{"drift: remediation cap reached", func() ([]metav1.Condition, []Event) {
			c, _ := DriftAfterApply(ApplyAfterDrift{Job: name, Remediation: true, Limit: 3, Failures: 3})
			return conds(c)
		}},
		{"transitions: a cluster goes unhealthy, drifts and is deleted", func() ([]metav1.Condition, []Event) {
			before := []metav1.Condition{
				{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionTrue, Reason: infrav1.HealthyReason, Message: "healthy"},
				{Type: infrav1.DriftDetectedCondition, Status: metav1.ConditionFalse, Reason: infrav1.NoDriftReason},
			}
			after := append(Lifecycle(true, false),
				metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionFalse, Reason: infrav1.InstanceUnhealthyReason, Message: "the load balancer answers 503"},
				found)
			return nil, Transitions(before, after)
		}},
	}
}

// TestReportsGolden renders every report of reports() and compares them
// with testdata/reports.golden, so that a change of what users read (a
// condition's status, reason or message, an event) shows as a diff of
// that file in review. Run with -update to rewrite it, then read the diff.
func TestReportsGolden(t *testing.T) {
	var b strings.Builder
	for _, r := range reports() {
		fmt.Fprintf(&b, "%s:\n", r.name)
		conds, events := r.got()
		for _, c := range conds {
			fmt.Fprintf(&b, "  %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
		for _, ev := range events {
			fmt.Fprintf(&b, "  event %s %s: %s\n", ev.Type, ev.Reason, ev.Note)
		}
	}
	golden.Check(t, filepath.Join("testdata", "reports.golden"), b.String(), "reports", *update)
}
