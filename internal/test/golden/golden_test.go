package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A transcript that differs names the differing lines, both sides.
func TestLineDiff(t *testing.T) {
	got := lineDiff("a\nb\nc\n", "a\nB\nc\nd\n")
	if !strings.Contains(got, "2:\n- b\n+ B\n") || !strings.Contains(got, "4:\n- \n+ d\n") || strings.Contains(got, "1:") {
		t.Errorf("lineDiff = %q", got)
	}
}

// Check with update writes the file, and then agrees with it.
func TestCheckUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "x.golden")
	Check(t, path, "one\n", "lines", true)
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\n" {
		t.Fatalf("after update: %q, %v", b, err)
	}
	Check(t, path, "one\n", "lines", false)
}
