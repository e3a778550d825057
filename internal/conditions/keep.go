package conditions

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Step is a step of a pass that computes condition types: each type it
// owns is said by every pass that runs it (Status removes one it left
// unsaid), and kept only by a pass that did not run it.
type Step string

// The steps of a pass that own condition types (Owner).
const (
	// StepLifecycle: the owner looked up (Paused, Deleting).
	StepLifecycle Step = "Lifecycle"
	// StepInputs: the current inputs built, or found already rendered
	// (DependenciesReady).
	StepInputs Step = "Inputs"
	// StepCredentials: the identity checked, its mirror written when due
	// (IdentityAllowed, CredentialsMirrored).
	StepCredentials Step = "Credentials"
	// StepRunnerRBAC: the runner's ServiceAccount and RoleBinding checked,
	// written when due (RunnerRBACReady).
	StepRunnerRBAC Step = "RunnerRBAC"
	// StepState: the state read (StateReadable).
	StepState Step = "State"
	// StepOutputs: the outputs of a state read mapped onto the object
	// (OutputsValid, InfrastructureHealthy, EndpointAvailable).
	StepOutputs Step = "Outputs"
	// StepDependents: a deleting cluster's machines and pools counted
	// (DeletionBlocked).
	StepDependents Step = "Dependents"
	// StepOwnerSync: the role's after-step on its Cluster API owner
	// (AutoscalingActive).
	StepOwnerSync Step = "OwnerSync"
)

// Keeping is how a condition type goes from one pass to the next.
type Keeping struct {
	// Step owns the type (a fact the step computes); "" for a record.
	Step Step
	// Record: the type says what an earlier pass saw happen (a Job's
	// outcome, a drift finding, the verdict on the applied inputs) and
	// stays until a pass sees something newer; a live report overlays it
	// meanwhile (the engine's live reports).
	Record bool
	// Summary: computed from the others on every pass (Ready).
	Summary bool
}

// owners is the keeping of every condition type a workload carries.
var owners = map[string]Keeping{
	infrav1.ReadyCondition:                 {Summary: true},
	infrav1.PausedCondition:                {Step: StepLifecycle},
	infrav1.DeletingCondition:              {Step: StepLifecycle},
	infrav1.DependenciesReadyCondition:     {Step: StepInputs},
	infrav1.IdentityAllowedCondition:       {Step: StepCredentials},
	infrav1.CredentialsMirroredCondition:   {Step: StepCredentials},
	infrav1.RunnerRBACReadyCondition:       {Step: StepRunnerRBAC},
	infrav1.StateReadableCondition:         {Step: StepState},
	infrav1.OutputsValidCondition:          {Step: StepOutputs},
	infrav1.InfrastructureHealthyCondition: {Step: StepOutputs},
	infrav1.EndpointAvailableCondition:     {Step: StepOutputs},
	infrav1.DeletionBlockedCondition:       {Step: StepDependents},
	infrav1.AutoscalingActiveCondition:     {Step: StepOwnerSync},
	// Records: a Job's outcome (and, between two, what its operation
	// waits for, said again by every pass that decides), a drift finding,
	// and InputsApplied's verdict, which only a pass that can tell (no
	// other operation's Job running, not deleting, the state read) says
	// again (InputsApplied).
	infrav1.ApplyJobSucceededCondition:   {Record: true},
	infrav1.DriftJobSucceededCondition:   {Record: true},
	infrav1.RestoreJobSucceededCondition: {Record: true},
	infrav1.DriftDetectedCondition:       {Record: true},
	infrav1.InputsAppliedCondition:       {Record: true},
}

// Owner is the keeping of condition type t, and whether t is a workload's
// at all (a type another controller wrote is left as it is).
func Owner(t string) (Keeping, bool) {
	k, ok := owners[t]
	return k, ok
}

// Unsaid are the types Status removes from what in leaves because a step
// the pass ran owns them and the pass did not say them. Every step says
// its facts each time it runs, so none is a CAPTF bug the engine logs.
func Unsaid(in Pass) []string {
	reported := map[string]bool{}
	for _, c := range in.Reported {
		reported[c.Type] = true
	}
	for _, t := range in.Dropped {
		reported[t] = true // said: it goes
	}
	var have []string
	for _, c := range append(append([]metav1.Condition(nil), in.Previous...), FirstVisit(in.Dependents)...) {
		if !slices.Contains(have, c.Type) {
			have = append(have, c.Type)
		}
	}
	return unsaid(have, in.Ran, reported)
}

// unsaid are the types of prev that a step in ran owns and that reported
// does not hold: a pass that ran the step and did not say them.
func unsaid(prev []string, ran []Step, reported map[string]bool) []string {
	did := map[Step]bool{}
	for _, s := range ran {
		did[s] = true
	}
	var out []string
	for _, t := range prev {
		if k := owners[t]; k.Step != "" && did[k.Step] && !reported[t] {
			out = append(out, t)
		}
	}
	return out
}
