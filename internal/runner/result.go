package runner

import (
	"encoding/json"
	"fmt"
	"os"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/plan"
)

// ResultVersion is the version of the result document this runner writes.
const ResultVersion = 1

// MaxResultBytes is the most a termination message may hold: the kubelet
// truncates a longer one, which would leave invalid JSON.
const MaxResultBytes = 4096

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

// Result is the document the runner writes to the pod's termination
// message at the end of every run, success or failure. Outputs are never
// part of it: the manager reads them from state.
type Result struct {
	// Version is always ResultVersion when marshalled.
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

// Drift is the outcome of a drift check, counted by action only.
type Drift struct {
	Detected bool `json:"detected"`
	Create   int  `json:"create"`
	Update   int  `json:"update"`
	Replace  int  `json:"replace"`
	Delete   int  `json:"delete"`
	// Resources lists up to MaxDriftResources drifted addresses.
	Resources []string `json:"resources,omitempty"`
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

// Bounds of the lists a result document carries.
const (
	MaxPlanResources  = 50
	MaxDriftResources = 20
)

// Marshal returns r as JSON of at most MaxResultBytes, degrading it in the
// documented stages until it fits (see MarshalStaged).
func Marshal(r Result) ([]byte, error) {
	b, _, err := MarshalStaged(r)
	return b, err
}

// WriteResult writes r's document to path, the pod's termination message
// file. The file is truncated and written in place, never replaced or
// chmod-ed: in a pod it is a file the kubelet mounted and owns. The
// document carries no secret, so a file it creates is world-readable.
func WriteResult(path string, r Result) error {
	b, err := Marshal(r)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing result to %s: %w", path, err)
	}
	return nil
}
