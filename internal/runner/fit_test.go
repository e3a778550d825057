package runner

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"captf.io/captf/internal/plan"
)

// padTo lengthens the image reference so that r, marshalled whole, is
// exactly size bytes.
func padTo(t *testing.T, r Result, size int) Result {
	t.Helper()
	b, err := encodeResult(bounded(r))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > size {
		t.Fatalf("document already %d bytes, cannot pad to %d", len(b), size)
	}
	r.Image.Ref += strings.Repeat("x", size-len(b))
	return r
}

func TestMarshalStages(t *testing.T) {
	tail := strings.Repeat("Error summary text. ", 25) // 500 bytes
	testCases := []struct {
		name      string
		result    func(t *testing.T) Result
		wantStage Stage
		check     func(t *testing.T, got Result)
	}{
		{
			name:      "small document unchanged",
			result:    func(*testing.T) Result { return withChanges(withError(baseResult(), "boom")) },
			wantStage: StageFull,
			check: func(t *testing.T, got Result) {
				if got.Changes == nil || got.Error.Tail != "boom" || len(got.Steps) != 3 {
					t.Errorf("content lost: %+v", got)
				}
			},
		},
		{
			name:      "exactly 4096 bytes fits",
			result:    func(t *testing.T) Result { return padTo(t, withChanges(withError(baseResult(), tail)), MaxResultBytes) },
			wantStage: StageFull,
		},
		{
			name: "one byte over drops the change counts only",
			result: func(t *testing.T) Result {
				return padTo(t, withChanges(withError(baseResult(), tail)), MaxResultBytes+1)
			},
			wantStage: StageNoChanges,
			check: func(t *testing.T, got Result) {
				if got.Changes != nil {
					t.Error("changes kept")
				}
				if got.Error.Tail != tail {
					t.Error("tail dropped too early")
				}
			},
		},
		{
			name: "over by more than the counts drops the error tail, keeping kind and step",
			result: func(t *testing.T) Result {
				return padTo(t, withChanges(withError(baseResult(), tail)), MaxResultBytes+200)
			},
			wantStage: StageNoTail,
			check: func(t *testing.T, got Result) {
				if got.Error == nil || got.Error.Tail != "" || got.Error.Kind != KindStep || got.Error.Step != "apply" {
					t.Errorf("error = %+v, want kind and step without tail", got.Error)
				}
				if len(got.Steps) != 3 {
					t.Error("steps dropped too early")
				}
			},
		},
		{
			name: "a long resource list goes, the plan hash and counts stay",
			result: func(*testing.T) Result {
				r := withPlan(withError(baseResult(), tail), 50)
				r.Error.Kind = KindBlocked
				return r
			},
			wantStage: StageNoResources,
			check: func(t *testing.T, got Result) {
				p := got.Plan
				if p == nil || p.Hash != planHash || p.Create != 50 || p.Update != 2 || p.Delete != 1 || p.OutputChanges != 1 {
					t.Fatalf("plan summary lost: %+v", p)
				}
				if len(p.Resources) != 0 || !p.Truncated {
					t.Errorf("resources %d truncated %v, want none and truncated", len(p.Resources), p.Truncated)
				}
				if len(got.Steps) != 3 || got.Error.Kind != KindBlocked {
					t.Errorf("steps or error lost: %+v", got)
				}
			},
		},
		{
			name: "drift resources go like plan resources",
			result: func(t *testing.T) Result {
				r := baseResult()
				r.Op = "drift"
				r.Drift = &Drift{Drift: plan.Drift{Detected: true, Update: 20}}
				for i := range 20 {
					r.Drift.Resources = append(r.Drift.Resources, fmt.Sprintf("module.role.aws_security_group.rule_%03d%s", i, strings.Repeat("x", 200)))
				}
				return r
			},
			wantStage: StageNoResources,
			check: func(t *testing.T, got Result) {
				if got.Drift == nil || !got.Drift.Detected || got.Drift.Update != 20 || len(got.Drift.Resources) != 0 || !got.Drift.Truncated {
					t.Errorf("drift = %+v", got.Drift)
				}
			},
		},
		{
			name:      "a long step history goes last",
			result:    func(*testing.T) Result { return withSteps(withPlan(withError(baseResult(), tail), 10), 120) },
			wantStage: StageNoSteps,
			check: func(t *testing.T, got Result) {
				if got.Steps == nil || len(got.Steps) != 0 {
					t.Errorf("steps = %v, want an empty list", got.Steps)
				}
				if got.Plan.Hash != planHash || got.Plan.Create != 10 {
					t.Errorf("plan summary lost: %+v", got.Plan)
				}
			},
		},
		{
			name: "an absurd image reference is truncated rather than overflow",
			result: func(*testing.T) Result {
				r := withPlan(withError(baseResult(), tail), 3)
				r.Image.Ref = strings.Repeat("registry.example.com/", 500)
				return r
			},
			wantStage: StageTruncatedStrings,
			check: func(t *testing.T, got Result) {
				if got.Op != "apply" || got.Error.Kind != KindStep || got.Plan.Hash != planHash {
					t.Errorf("op, kind or hash lost: %+v", got)
				}
				if !strings.HasPrefix(strings.Repeat("registry.example.com/", 500), got.Image.Ref) || got.Image.Ref == "" {
					t.Errorf("ref is not a prefix of the original: %q", got.Image.Ref)
				}
			},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			b, stage, err := MarshalStaged(tc.result(t))
			if err != nil {
				t.Fatal(err)
			}
			if stage != tc.wantStage {
				t.Errorf("stage = %v, want %v", stage, tc.wantStage)
			}
			if len(b) > MaxResultBytes {
				t.Fatalf("%d bytes > %d", len(b), MaxResultBytes)
			}
			var got Result
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("invalid JSON: %v", err)
			}
			if got.Version != ResultVersion {
				t.Errorf("version = %d", got.Version)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

func TestMarshalBoundsLists(t *testing.T) {
	r := withPlan(baseResult(), 60)
	r.Drift = &Drift{Drift: plan.Drift{Detected: true}}
	for i := range 25 {
		r.Drift.Resources = append(r.Drift.Resources, fmt.Sprintf("d.%d", i))
	}
	r.Error = &RunError{Kind: KindPlanChanged, Tail: strings.Repeat("é", 400)}
	for i := range r.Plan.Resources {
		r.Plan.Resources[i] = fmt.Sprintf("r.%d", i) // short, so no stage drops them
	}

	b, stage, err := MarshalStaged(r)
	if err != nil {
		t.Fatal(err)
	}
	var got Result
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if stage != StageFull {
		t.Errorf("stage = %v", stage)
	}
	if len(got.Plan.Resources) != MaxPlanResources || !got.Plan.Truncated || got.Plan.Resources[49] != "r.49" {
		t.Errorf("plan resources %d truncated %v", len(got.Plan.Resources), got.Plan.Truncated)
	}
	if len(got.Drift.Resources) != MaxDriftResources || !got.Drift.Truncated {
		t.Errorf("drift resources %d truncated %v", len(got.Drift.Resources), got.Drift.Truncated)
	}
	if len(got.Error.Tail) > SummaryMaxBytes || !utf8.ValidString(got.Error.Tail) {
		t.Errorf("tail %d bytes, valid %v", len(got.Error.Tail), utf8.ValidString(got.Error.Tail))
	}
	// The caller's document is untouched.
	if len(r.Plan.Resources) != 60 || len(r.Drift.Resources) != 25 || r.Plan.Truncated || len(r.Error.Tail) != 800 {
		t.Errorf("Marshal modified its argument")
	}
}

func TestMarshalDoesNotModifyItsArgument(t *testing.T) {
	r := withSteps(withChanges(withPlan(withError(baseResult(), strings.Repeat("t", 500)), 50)), 100)
	r.Image.Ref = strings.Repeat("r", 5000)
	before, _ := json.Marshal(r)
	if _, stage, err := MarshalStaged(r); err != nil || stage != StageTruncatedStrings {
		t.Fatalf("stage %v err %v", stage, err)
	}
	after, _ := json.Marshal(r)
	if string(before) != string(after) {
		t.Error("MarshalStaged modified its argument")
	}
}

func TestRescueSurvivesEveryStage(t *testing.T) {
	r := Result{Op: "apply", Rescue: &Rescue{Backup: "captf-state-backup-0123456789abcdef-c-7", Serial: 7, Chunks: 2},
		Error: &RunError{Kind: KindStep, Step: "apply", Tail: strings.Repeat("x", 600)}}
	for i := 0; i < 200; i++ {
		r.Steps = append(r.Steps, Step{Name: strings.Repeat("s", 60), Exit: 1})
	}
	b, stage, err := MarshalStaged(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Rescue == nil || *back.Rescue != *r.Rescue {
		t.Errorf("after stage %s the rescue is %+v", stage, back.Rescue)
	}
}
