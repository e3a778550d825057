package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// module writes a module of packages (directory -> test file) and
// returns its directory.
func module(t *testing.T, tests map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"go.mod": "module trmod\n\ngo 1.24\n"}
	for pkg, src := range tests {
		files[filepath.Join(pkg, pkg+"_test.go")] = "package " + pkg + "\n\nimport \"testing\"\n\n" + src
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runIn runs testrun in dir as make test would, with a bin dir of its own.
func runIn(t *testing.T, dir string, words ...string) (string, error) {
	t.Helper()
	t.Chdir(dir)
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"-bin-dir", filepath.Join(dir, "bin"), "-count=1"}, words...), &out)
	return out.String(), err
}

func TestAFailedPackageFailsTheRunWithItsOutputAndLaterGroupsStillRun(t *testing.T) {
	dir := module(t, map[string]string{
		"fails":  `func TestBoom(t *testing.T) { t.Fatal("the reason it failed") }`,
		"passes": `func TestQuiet(t *testing.T) { t.Log("not shown when it passes") }`,
		"later":  `func TestLater(t *testing.T) {}`,
	})
	out, err := runIn(t, dir, "./fails", "./passes", "--then", "./later")
	if !errors.Is(err, errFailed) {
		t.Fatalf("got %v, want the run to fail\n%s", err, out)
	}
	for _, want := range []string{"the reason it failed", "FAIL\ttrmod/fails\t", "ok  \ttrmod/passes\t", "ok  \ttrmod/later\t"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not shown when it passes") {
		t.Errorf("a passing package's output is shown without -v:\n%s", out)
	}
	if strings.Index(out, "trmod/later") < strings.Index(out, "trmod/passes") {
		t.Errorf("the later group ran before the first ended:\n%s", out)
	}
}

func TestABuildFailureRunsNoTest(t *testing.T) {
	dir := module(t, map[string]string{
		"broken": `func TestBroken(t *testing.T) { undefined() }`,
		"passes": `func TestQuiet(t *testing.T) {}`,
	})
	out, err := runIn(t, dir, "./...")
	if err == nil || !strings.Contains(err.Error(), "no test ran") {
		t.Fatalf("got %v, want a build failure\n%s", err, out)
	}
	if strings.Contains(out, "ok  \ttrmod/passes") {
		t.Errorf("a test ran although a test binary did not build:\n%s", out)
	}
}
