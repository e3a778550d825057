package records_test

import (
	"testing"

	"captf.io/captf/internal/records"
)

func TestForDestroy(t *testing.T) {
	applied := &records.Record{Name: "applied", Job: "job-1", InputsHash: "h2:one"}
	attempt := &records.Record{Name: "attempt", Job: "job-2", InputsHash: "h2:two"}
	attemptMay := &records.Record{Name: "attempt", Job: "job-2", InputsHash: "h2:two", MayHaveApplied: true}
	// The attempt record of the Job the applied record names: the apply
	// that failed is the one that later succeeded.
	attemptSameJob := &records.Record{Name: "attempt", Job: "job-1", InputsHash: "h2:one", MayHaveApplied: true}

	testCases := []struct {
		name             string
		attempt, applied *records.Record
		stateHash        string
		want             string
		wantMismatch     bool
	}{
		// Row 1: the attempt record of another Job that may have applied.
		{name: "1: attempt of a failed apply that may have applied", attempt: attemptMay, applied: applied, stateHash: "h2:one", want: "attempt", wantMismatch: true},
		{name: "1: attempt that may have applied, no applied record", attempt: attemptMay, stateHash: "h2:two", want: "attempt"},
		{name: "1: attempt that may have applied, state without hash", attempt: attemptMay, applied: applied, want: "attempt"},
		{name: "1 does not apply: attempt names the applied Job", attempt: attemptSameJob, applied: applied, stateHash: "h2:one", want: "applied"},
		// Row 2: the record carrying the state's hash, the applied record first.
		{name: "2: state hash names the attempt record", attempt: attempt, applied: applied, stateHash: "h2:two", want: "attempt"},
		{name: "2: state hash names the applied record", attempt: attempt, applied: applied, stateHash: "h2:one", want: "applied"},
		{name: "2: both carry the state hash, applied first", attempt: &records.Record{Name: "attempt", Job: "job-2", InputsHash: "h2:one"}, applied: applied, stateHash: "h2:one", want: "applied"},
		{name: "2: only the attempt record, carrying the hash", attempt: attempt, stateHash: "h2:two", want: "attempt"},
		// Row 3: applied record, else attempt record.
		{name: "3: no record carries the state hash: applied", attempt: attempt, applied: applied, stateHash: "h2:other", want: "applied", wantMismatch: true},
		{name: "3: state without hash: applied", attempt: attempt, applied: applied, want: "applied"},
		{name: "3: only the attempt record, other hash", attempt: attempt, stateHash: "h2:other", want: "attempt", wantMismatch: true},
		{name: "3: only the applied record, no state hash", applied: applied, want: "applied"},
		{name: "3: only the attempt record, no state hash", attempt: attempt, want: "attempt"},
		// Row 4: no record.
		{name: "4: no record", stateHash: "h2:one", want: ""},
		{name: "4: no record, no state hash", want: ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, mismatch := records.ForDestroy(tc.attempt, tc.applied, tc.stateHash)
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tc.want || mismatch != tc.wantMismatch {
				t.Errorf("ForDestroy = %q, mismatch %v; want %q, mismatch %v", name, mismatch, tc.want, tc.wantMismatch)
			}
		})
	}
}

// TestRendered: a mutable kind's refresh or drift renders its current
// inputs when they build; a destroy, and an immutable kind, render the
// record ForDestroy picks, with its mismatch; without a record a mutable
// kind falls back to its current inputs and an immutable one renders
// nothing.
func TestRendered(t *testing.T) {
	current := &records.Record{Name: "current", InputsHash: "h2:now"}
	applied := &records.Record{Name: "applied", Job: "job-1", InputsHash: "h2:one"}
	mayHave := &records.Record{Name: "attempt", Job: "job-2", InputsHash: "h2:state", MayHaveApplied: true}
	testCases := []struct {
		name                      string
		destroy, mutable          bool
		current, attempt, applied *records.Record
		want                      string
		wantMismatch              bool
	}{
		{name: "a mutable kind's destroy after a possible partial apply", destroy: true, mutable: true, current: current, attempt: mayHave, applied: applied, want: "attempt"},
		{name: "an immutable kind's refresh after a possible partial apply", current: current, attempt: mayHave, applied: applied, want: "attempt"},
		{name: "a mutable kind's refresh", mutable: true, current: current, applied: applied, want: "current"},
		{name: "a mutable kind's destroy", destroy: true, mutable: true, current: current, applied: applied, want: "applied", wantMismatch: true},
		{name: "a mutable kind's refresh, inputs not building", mutable: true, applied: applied, want: "applied", wantMismatch: true},
		{name: "a mutable kind's destroy without a record", destroy: true, mutable: true, current: current, want: "current"},
		{name: "an immutable kind's refresh", current: current, applied: applied, want: "applied", wantMismatch: true},
		{name: "an immutable kind without a record", current: current, want: ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			rec, mismatch := records.Rendered(tc.destroy, tc.mutable, tc.current, tc.attempt, tc.applied, "h2:state")
			got := ""
			if rec != nil {
				got = rec.Name
			}
			if got != tc.want || mismatch != tc.wantMismatch {
				t.Errorf("Rendered = %q, mismatch %t; want %q, %t", got, mismatch, tc.want, tc.wantMismatch)
			}
		})
	}
}
