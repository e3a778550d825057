package runner

import (
	"fmt"
	"os"

	"captf.io/captf/internal/runner/result"
)

// The result document's types are package result's, which the manager
// reads without linking the runner.
const (
	ResultVersion  = result.Version
	MaxResultBytes = result.MaxBytes
	// Bounds of the lists a result document carries.
	MaxPlanResources  = result.MaxPlanResources
	MaxDriftResources = result.MaxDriftResources
)

// ErrorKind classifies a failed run (result.ErrorKind).
type ErrorKind = result.ErrorKind

// Error kinds of a result document.
const (
	KindImageLayout = result.KindImageLayout
	KindStep        = result.KindStep
	KindInterrupted = result.KindInterrupted
	KindBlocked     = result.KindBlocked
	KindPlanChanged = result.KindPlanChanged
)

// The result document and its parts (package result).
type (
	Result      = result.Document
	Image       = result.Image
	Runtime     = result.Runtime
	Step        = result.Step
	Drift       = result.Drift
	RunError    = result.RunError
	Changes     = result.Changes
	PlanSummary = result.PlanSummary
	Rescue      = result.Rescue
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
