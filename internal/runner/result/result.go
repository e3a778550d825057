// Package result is the document a Job's runner writes to its pod's
// termination message at the end of every run, and the manager reads back
// (internal/jobs.OutcomeOf): the steps it ran, how it failed, a drift
// check's counts, a plan's summary, where a rejected state was saved. It
// holds the types only, so that the manager reads the document without
// linking the runner (internal/runner writes it: Marshal, WriteResult).
// The document never carries outputs, state or credentials.
package result

import (
	"encoding/json"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/plan"
)

// Version is the version of the result document this runner writes.
const Version = 1

// MaxBytes is the most a termination message may hold: the kubelet
// truncates a longer one, which would leave invalid JSON.
const MaxBytes = 4096

// ErrorKind classifies a failed run; the kinds are the API's, which the
// manager copies into status.lastRun.error.kind.
type ErrorKind = infrav1.RunErrorKind

// Error kinds of a result document.
const (
	KindImageLayout = infrav1.RunErrorImageLayout
	KindStep        = infrav1.RunErrorStep
	KindInterrupted = infrav1.RunErrorInterrupted
	KindBlocked     = infrav1.RunErrorBlocked
	KindPlanChanged = infrav1.RunErrorPlanChanged
)

// Document is the document the runner writes to the pod's termination
// message at the end of every run, success or failure. Outputs are never
// part of it: the manager reads them from state.
type Document struct {
	// Version is always Version when marshalled.
	Version int     `json:"version"`
	Op      string  `json:"op"`
	Image   Image   `json:"image"`
	Runtime Runtime `json:"runtime"`
	// Steps lists every command run, in order.
	Steps []Step `json:"steps"`
	// Drift is set for the drift operation only.
	Drift *Drift `json:"drift"`
	// Error is nil when the run succeeded.
	Error *RunError `json:"error"`
	// Changes holds the counts of the final summary line of apply or
	// destroy; nil when there was none.
	Changes *Changes `json:"changes,omitempty"`
	// Plan is set for a plan Job, a blocked guarded apply and a
	// plan-changed apply.
	Plan *PlanSummary `json:"plan,omitempty"`
	// Rescue is set when the backend rejected the state and the runner
	// saved it as a state backup (beyond the documented fields).
	Rescue *Rescue `json:"rescue,omitempty"`
}

// Image describes the module image the run used.
type Image struct {
	// Ref is the --image flag, verbatim.
	Ref string `json:"ref"`
	// ProvidersMirror is true when the image ships /captf/providers.
	ProvidersMirror bool `json:"providersMirror"`
}

// Runtime describes the Terraform or OpenTofu binary the run used.
type Runtime struct {
	// Command is the runtime's argv prefix (the --bin flags).
	Command []string `json:"command"`
	// Version is the version `version -json` reported, or "" when it failed.
	Version string `json:"version"`
}

// Step records one command the runner ran.
type Step struct {
	Name string `json:"name"`
	// Exit is the command's exit code; 1 when it was killed by a signal or
	// could not start.
	Exit int `json:"exit"`
	// Seconds is the command's duration, marshalled to the millisecond.
	Seconds float64 `json:"seconds"`
}

// Drift is the outcome of a drift check, counted by action only: what the
// plan found (plan.Drift, inline: its counts and up to MaxDriftResources
// drifted addresses), and whether Resources is incomplete.
type Drift struct {
	plan.Drift
	// Truncated is true when Resources is incomplete.
	Truncated bool `json:"truncated,omitempty"`
}

// RunError says why a run failed.
type RunError struct {
	Kind ErrorKind `json:"kind"`
	// Step names the failed command; "" (marshalled as null) when the
	// failure is not a command's.
	Step string `json:"step"`
	// Tail is the curated failure summary (see Summary), at most
	// SummaryMaxBytes; never raw output.
	Tail string `json:"tail,omitempty"`
}

// MarshalJSON writes an empty Step as null.
func (e RunError) MarshalJSON() ([]byte, error) {
	type wire struct {
		Kind ErrorKind `json:"kind"`
		Step *string   `json:"step"`
		Tail string    `json:"tail,omitempty"`
	}
	w := wire{Kind: e.Kind, Tail: e.Tail}
	if e.Step != "" {
		w.Step = &e.Step
	}
	return json.Marshal(w)
}

// Changes holds the counts of apply's or destroy's final summary line.
type Changes struct {
	Add     int  `json:"add"`
	Change  int  `json:"change"`
	Destroy int  `json:"destroy"`
	Import  *int `json:"import,omitempty"`
}

// PlanSummary is the summary of a saved plan: its keyed hash, its counts
// and a bounded list of the resources it touches.
type PlanSummary struct {
	Hash string `json:"hash"`
	// Summary holds the counts and the bounded resource list (at most
	// MaxPlanResources "<address> (<labels>)" entries), inline.
	plan.Summary
}

// Bounds of the lists a result document carries: a plan summary's
// (plan.MaxResources) and a drift check's (plan.MaxDriftResources).
const (
	MaxPlanResources  = plan.MaxResources
	MaxDriftResources = plan.MaxDriftResources
)

// Rescue says where the runner saved a state the backend rejected.
type Rescue struct {
	// Backup is the name of the backup set's first Secret.
	Backup string `json:"backup"`
	// Serial is the saved state's serial: restore it with the annotation
	// captf.io/restore-state=<serial>.
	Serial int64 `json:"serial"`
	// Chunks is the number of Secrets the set spans.
	Chunks int `json:"chunks"`
}

// Step names as they appear in results, events and metrics.
const (
	StepPrepare          = "prepare"
	StepInit             = "init"
	StepForceUnlock      = "force-unlock"
	StepPlan             = "plan"
	StepShowJSON         = "show-json"
	StepApply            = "apply"
	StepApplyRefreshOnly = "apply-refresh-only"
	StepDestroy          = "destroy"
	StepStatePush        = "state-push"
	StepStateList        = "state-list"
)
