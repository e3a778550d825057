package command

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"captf.io/captf/internal/lint"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), args, Streams{Out: &out, Err: &errOut})
	return code, out.String(), errOut.String()
}

// copyExample copies an example module into a new directory and adds
// files to it.
func copyExample(t *testing.T, name string, extra map[string]string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "examples", "modules", name)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		extra[e.Name()] = string(data) + extra[e.Name()]
	}
	for name, content := range extra {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestExitCodes(t *testing.T) {
	clean := copyExample(t, "noop-machine", map[string]string{})
	warning := copyExample(t, "noop-machine", map[string]string{"extra.tf": "variable \"zone\" { type = string }\n"})
	broken := copyExample(t, "noop-machine", map[string]string{"extra.tf": "variable \"zone\" {\n"})
	wrongRole := clean
	testCases := []struct {
		name       string
		args       []string
		want       int
		wantStdout string
		wantStderr string
	}{
		{"no command", nil, lint.ExitUsage, "", "no command given"},
		{"an unknown command", []string{"bogus"}, lint.ExitUsage, "", `unknown command "bogus"`},
		{"an unknown --version value", []string{"--version=foo"}, lint.ExitUsage, "", `--version="foo"`},
		{"an unknown flag", []string{"module", "--bogus", clean}, lint.ExitUsage, "", "unknown flag: --bogus"},
		{"no role", []string{"module", clean}, lint.ExitUsage, "", "--role is required"},
		{"an unknown role", []string{"module", "--role=worker", clean}, lint.ExitUsage, "", `--role="worker" is not a role`},
		{"an unknown contract", []string{"module", "--role=machine", "--contract=v1beta1", clean}, lint.ExitUsage, "", `--contract="v1beta1"`},
		{"no directory", []string{"module", "--role=machine"}, lint.ExitUsage, "", "expected one argument"},
		{"two directories", []string{"module", "--role=machine", clean, clean}, lint.ExitUsage, "", "expected one argument"},
		{"a clean module", []string{"module", "--role=machine", clean}, lint.ExitOK, "0 error(s), 0 warning(s), 0 info (module " + clean + ", role machine, contract v1alpha1)", ""},
		{"a warning", []string{"module", "--role=machine", warning}, lint.ExitOK, "warning input/user-variable-default extra.tf:1 ", ""},
		{"a warning, strict", []string{"module", "--role=machine", "--strict", warning}, lint.ExitFindings, "0 error(s), 1 warning(s)", ""},
		{"a warning allowed, strict", []string{"module", "--role=machine", "--strict", "--allow-warning=input/user-variable-default", warning}, lint.ExitOK, "info input/user-variable-default extra.tf:1 ", ""},
		{"an error", []string{"module", "--role=cluster", wrongRole}, lint.ExitFindings, "error input/required -:0 ", ""},
		{"an error cannot be allowed", []string{"module", "--role=cluster", "--allow-warning", "input/required", wrongRole}, lint.ExitFindings, "error input/required -:0 ", ""},
		{"an unparsable module", []string{"module", "--role=machine", broken}, lint.ExitUnparsable, "", "extra.tf:"},
		{"a missing directory", []string{"module", "--role=machine", filepath.Join(clean, "nope")}, lint.ExitUnparsable, "", "nope"},
		{"an image without role", []string{"image", "oci:" + clean}, lint.ExitUsage, "", "--role is required"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.want, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.wantStdout) {
				t.Errorf("stdout %q lacks %q", stdout, tc.wantStdout)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.wantStderr)
			}
		})
	}
}

func TestJSONReport(t *testing.T) {
	dir := copyExample(t, "noop-machine", map[string]string{
		"b.tf": "variable \"zone\" { type = string }\nterraform {\n  backend \"s3\" {}\n}\n",
		"a.tf": "output \"captf_x\" { value = 1 }\n",
	})
	code, stdout, _ := run(t, "module", "--role=machine", "--json", dir)
	if code != lint.ExitFindings {
		t.Fatalf("exit %d, want %d", code, lint.ExitFindings)
	}
	var r struct {
		Findings []lint.Finding `json:"findings"`
		Summary  lint.Summary   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.File+" "+f.ID)
	}
	want := []string{"a.tf output/reserved", "b.tf input/user-variable-default", "b.tf module/backend"}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q (sorted by file, line, id)", got, want)
	}
	if r.Summary != (lint.Summary{Error: 1, Warning: 2}) {
		t.Errorf("summary %+v, want 1 error and 2 warnings", r.Summary)
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := run(t, "version", "--json")
	var info map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &info) != nil {
		t.Fatalf("version --json: exit %d, %s", code, stdout)
	}
	for _, key := range []string{"version", "commit", "date", "contract"} {
		if info[key] == nil {
			t.Errorf("version --json lacks %q: %s", key, stdout)
		}
	}
	if c, _ := info["contract"].([]any); len(c) != 1 || c[0] != "v1alpha1" {
		t.Errorf("contract %v, want [v1alpha1]", info["contract"])
	}
	if code, stdout, _ := run(t, "--version"); code != 0 || !strings.HasPrefix(stdout, "tfcapi-lint ") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
	if code, stdout, _ := run(t, "--version=raw"); code != 0 || !strings.Contains(stdout, `"commit"`) {
		t.Errorf("--version=raw: exit %d, %q", code, stdout)
	}
}
