package records_test

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"captf.io/captf/internal/records"
)

func TestNames(t *testing.T) {
	long := strings.Repeat("n", 240)
	sum := sha256.Sum256([]byte(long))
	hash16 := hex.EncodeToString(sum[:])[:16]
	fits := strings.Repeat("f", 253-len("captf-applied-mp-"))
	testCases := []struct {
		name, kind, object string
		attempt, applied   string
	}{
		{name: "cluster", kind: "TerraformCluster", object: "c1", attempt: "captf-inputs-c-c1", applied: "captf-applied-c-c1"},
		{name: "machine", kind: "TerraformMachine", object: "web-0", attempt: "captf-inputs-m-web-0", applied: "captf-applied-m-web-0"},
		{name: "pool", kind: "TerraformMachinePool", object: "p", attempt: "captf-inputs-mp-p", applied: "captf-applied-mp-p"},
		{name: "a name that fits exactly keeps its name", kind: "TerraformMachinePool", object: fits,
			attempt: "captf-inputs-mp-" + fits, applied: "captf-applied-mp-" + fits},
		{name: "a long name is replaced by its hash", kind: "TerraformMachine", object: long,
			attempt: "captf-inputs-m-" + hash16, applied: "captf-applied-m-" + hash16},
		{name: "another kind has no record", kind: "Machine", object: "x"},
		{name: "no name, no record", kind: "TerraformMachine"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := records.AttemptName(tc.kind, tc.object); got != tc.attempt {
				t.Errorf("AttemptName = %q, want %q", got, tc.attempt)
			}
			if got := records.AppliedName(tc.kind, tc.object); got != tc.applied {
				t.Errorf("AppliedName = %q, want %q", got, tc.applied)
			}
			if n := len(records.AppliedName(tc.kind, tc.object)); n > 253 {
				t.Errorf("the applied record's name is %d characters long", n)
			}
		})
	}
}

// TestWithUnpullable: an image joins the unpullable list once, the
// newest MaxUnpullableImages are kept, and the list given is not changed
// (a pass's in-memory record and the stored one end the same).
func TestWithUnpullable(t *testing.T) {
	testCases := []struct {
		name  string
		list  []string
		image string
		want  []string
	}{
		{"the first", nil, "a", []string{"a"}},
		{"listed already", []string{"a", "b"}, "a", []string{"a", "b"}},
		{"a third", []string{"a", "b"}, "c", []string{"a", "b", "c"}},
		{"the oldest goes beyond the cap", []string{"a", "b", "c"}, "d", []string{"b", "c", "d"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			given := slices.Clone(tc.list)
			if got := records.WithUnpullable(given, tc.image); !slices.Equal(got, tc.want) {
				t.Errorf("WithUnpullable(%v, %s) = %v, want %v", tc.list, tc.image, got, tc.want)
			}
			if !slices.Equal(given, tc.list) {
				t.Errorf("the list given changed to %v", given)
			}
		})
	}
}
