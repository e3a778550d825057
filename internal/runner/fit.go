package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Stage is how far a result document was degraded to fit MaxResultBytes.
// Stages are cumulative: each one also applies those before it.
type Stage int

// Degradation stages, in the order they are applied.
const (
	// StageFull: the document fits as it is.
	StageFull Stage = iota
	// StageNoChanges: the apply/destroy change counts were dropped.
	StageNoChanges
	// StageNoTail: the error's failure summary was dropped.
	StageNoTail
	// StageNoResources: the plan and drift resource lists were dropped
	// (their truncated flags are set); hashes and counts stay.
	StageNoResources
	// StageNoSteps: the step history was dropped.
	StageNoSteps
	// StageTruncatedStrings: the remaining strings were shortened, the plan
	// hash and the error kind last. Only absurd inputs (an image reference
	// of kilobytes) get here.
	StageTruncatedStrings
)

var stageNames = [...]string{
	StageFull:             "full",
	StageNoChanges:        "dropped changes",
	StageNoTail:           "dropped error tail",
	StageNoResources:      "dropped resource lists",
	StageNoSteps:          "dropped step history",
	StageTruncatedStrings: "truncated strings",
}

func (s Stage) String() string {
	if s >= 0 && int(s) < len(stageNames) {
		return stageNames[s]
	}
	return fmt.Sprintf("Stage(%d)", int(s))
}

// MarshalStaged returns r as JSON of at most MaxResultBytes and the stage
// that made it fit. It first bounds what the document may hold anyway
// (version 1, valid UTF-8, at most MaxPlanResources plan and
// MaxDriftResources drift resources, a tail of at most SummaryMaxBytes,
// durations to the millisecond), then drops, in order and only as far as
// needed: the change counts, the error tail, the resource lists, the step
// history; as a last resort it shortens the remaining strings. r itself is
// never modified.
func MarshalStaged(r Result) ([]byte, Stage, error) {
	doc := bounded(r)
	for stage := StageFull; stage < StageTruncatedStrings; stage++ {
		degrade(&doc, stage)
		b, err := encodeResult(doc)
		if err != nil {
			return nil, stage, err
		}
		if len(b) <= MaxResultBytes {
			return b, stage, nil
		}
	}
	return squeeze(doc)
}

// bounded returns a deep copy of r within the document's own bounds.
func bounded(r Result) Result {
	doc := Result{
		Version: ResultVersion,
		Op:      validUTF8(r.Op),
		Image:   Image{Ref: validUTF8(r.Image.Ref), ProvidersMirror: r.Image.ProvidersMirror},
		Runtime: Runtime{Command: validUTF8s(r.Runtime.Command), Version: validUTF8(r.Runtime.Version)},
		Steps:   make([]Step, 0, len(r.Steps)),
	}
	for _, s := range r.Steps {
		doc.Steps = append(doc.Steps, Step{Name: validUTF8(s.Name), Exit: s.Exit, Seconds: seconds(s.Seconds)})
	}
	if r.Drift != nil {
		d := *r.Drift
		d.Resources, d.Truncated = boundList(d.Resources, MaxDriftResources, d.Truncated)
		doc.Drift = &d
	}
	if r.Error != nil {
		e := RunError{Kind: ErrorKind(validUTF8(string(r.Error.Kind))), Step: validUTF8(r.Error.Step)}
		e.Tail = capSummary(validUTF8(r.Error.Tail), SummaryMaxBytes)
		doc.Error = &e
	}
	if r.Changes != nil {
		c := *r.Changes
		if c.Import != nil {
			n := *c.Import
			c.Import = &n
		}
		doc.Changes = &c
	}
	if r.Plan != nil {
		p := *r.Plan
		p.Hash = validUTF8(p.Hash)
		p.Resources, p.Truncated = boundList(p.Resources, MaxPlanResources, p.Truncated)
		doc.Plan = &p
	}
	if r.Rescue != nil {
		// Kept through every stage: it is how the manager finds a state the
		// backend rejected. It holds a name and two numbers.
		doc.Rescue = &Rescue{Backup: validUTF8(r.Rescue.Backup), Serial: r.Rescue.Serial, Chunks: r.Rescue.Chunks}
	}
	return doc
}

// degrade applies one stage to doc, whose pointers and slices are its own.
func degrade(doc *Result, stage Stage) {
	switch stage {
	case StageNoChanges:
		doc.Changes = nil
	case StageNoTail:
		if doc.Error != nil {
			doc.Error.Tail = ""
		}
	case StageNoResources:
		if doc.Plan != nil && len(doc.Plan.Resources) > 0 {
			doc.Plan.Resources, doc.Plan.Truncated = nil, true
		}
		if doc.Drift != nil && len(doc.Drift.Resources) > 0 {
			doc.Drift.Resources, doc.Drift.Truncated = nil, true
		}
	case StageNoSteps:
		doc.Steps = []Step{}
	}
}

// squeeze shortens the strings left after every other stage, longest first:
// first all but the plan hash and the error kind, then those too. Once
// every string is empty the document is a few hundred bytes of keys and
// counts, so it always fits.
func squeeze(doc Result) ([]byte, Stage, error) {
	for _, limit := range []int{1024, 512, 256, 128, 64, 32, 16, 8, 4, 0} {
		doc.Op = truncateUTF8(doc.Op, limit)
		doc.Image.Ref = truncateUTF8(doc.Image.Ref, limit)
		doc.Runtime.Version = truncateUTF8(doc.Runtime.Version, limit)
		doc.Runtime.Command = truncateList(doc.Runtime.Command, 8, limit)
		if doc.Error != nil {
			doc.Error.Step = truncateUTF8(doc.Error.Step, limit)
		}
		if b, ok, err := fits(doc); ok || err != nil {
			return b, StageTruncatedStrings, err
		}
	}
	for _, limit := range []int{64, 16, 0} {
		doc.Runtime.Command = truncateList(doc.Runtime.Command, 1, limit)
		if doc.Plan != nil {
			doc.Plan.Hash = truncateUTF8(doc.Plan.Hash, limit)
		}
		if doc.Error != nil {
			doc.Error.Kind = ErrorKind(truncateUTF8(string(doc.Error.Kind), limit))
		}
		if b, ok, err := fits(doc); ok || err != nil {
			return b, StageTruncatedStrings, err
		}
	}
	return nil, StageTruncatedStrings, fmt.Errorf("result document does not fit in %d bytes", MaxResultBytes)
}

func fits(doc Result) ([]byte, bool, error) {
	b, err := encodeResult(doc)
	if err != nil {
		return nil, false, err
	}
	return b, len(b) <= MaxResultBytes, nil
}

// encodeResult marshals without HTML escaping: the document is read by the
// manager, and "<" escaped as \u003c only costs bytes.
func encodeResult(doc Result) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding result document: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func boundList(list []string, limit int, truncated bool) ([]string, bool) {
	if len(list) > limit {
		list, truncated = list[:limit], true
	}
	return validUTF8s(list), truncated
}

func truncateList(list []string, maxItems, maxBytes int) []string {
	if len(list) > maxItems {
		list = list[:maxItems]
	}
	for i := range list {
		list[i] = truncateUTF8(list[i], maxBytes)
	}
	return list
}

// validUTF8s returns a copy of list with every string made valid UTF-8;
// nil becomes an empty list.
func validUTF8s(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = validUTF8(s)
	}
	return out
}

// validUTF8 replaces invalid bytes up front, so that truncation on rune
// boundaries never meets them and the encoder never expands them.
func validUTF8(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}

// seconds rounds a duration to the millisecond; a value JSON cannot carry
// (NaN, infinity) or a negative one becomes 0.
func seconds(s float64) float64 {
	if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
		return 0
	}
	if s < 1e12 {
		return math.Round(s*1000) / 1000
	}
	return s
}
