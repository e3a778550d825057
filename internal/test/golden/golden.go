// Package golden compares a test's rendered output with a checked-in
// transcript (testdata/*.golden), so that a change of behaviour shows as
// a diff of that file in review.
package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the file at path; with update it first
// rewrites the file from got (go test -update), for the diff to be read.
// what says what the file holds ("decisions", "reports").
func Check(t *testing.T, path, got, what string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("the %s differ from %s (if the change is meant, run with -update and review the diff):\n%s", what, path, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines that differ, numbered.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "%d:\n- %s\n+ %s\n", i+1, a, c)
		}
	}
	return b.String()
}
