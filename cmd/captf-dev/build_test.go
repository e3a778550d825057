package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/contract"
)

// `captf-dev images build` lays a module directory over the base image of
// its runtime, imports it under local/dev/<name>:<runtime> and lints it:
// a clean module builds with no error; one that breaks the contract is
// built all the same, but the command fails and the lint names the error.
func TestImagesBuildCommand(t *testing.T) {
	tools := envtest.RequireTools(t, "tofu", "sh")
	store := filepath.Join(t.TempDir(), "store")
	module := filepath.Join(t.TempDir(), "my-machine")
	if err := os.CopyFS(module, os.DirFS(filepath.Join("..", "..", "examples", "modules", "noop-machine"))); err != nil {
		t.Fatal(err)
	}
	layout := filepath.Join(t.TempDir(), "layout")
	args := []string{"--tools", tools, "images", "build", "--role=machine", "--out", store, "--layout", layout, module}
	out, err := captureStdout(t, func() error { return run(args) })
	if err != nil {
		t.Fatalf("captf-dev images build: %v\n%s", err, out)
	}
	for _, want := range []string{"built     local/dev/my-machine:tofu@sha256:", "  " + layout + "\n", "0 error(s), 0 warning(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(layout, "index.json")); err != nil {
		t.Errorf("no OCI layout written: %v", err)
	}
	if err := os.Remove(filepath.Join(module, "outputs.tf")); err != nil {
		t.Fatal(err)
	}
	out, err = captureStdout(t, func() error { return run(args) })
	if err == nil || !strings.Contains(err.Error(), "breaks the module contract") || !strings.Contains(out, "error output/required /captf/module:0") {
		t.Errorf("a module without outputs: error %v, output:\n%s", err, out)
	}
	if err := run([]string{"--tools", tools, "images", "build", module}); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no role: %v", err)
	}
}

// The demo takes a module directory or an image per role, not both.
func TestDemoFlags(t *testing.T) {
	m, err := parseDemo([]string{"--runtime=terraform", "--machine-module", "./m", "--cluster-image", "local/c:tofu"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Runtime != "terraform" || m.Dirs[contract.RoleMachine] != "./m" || m.Images[contract.RoleCluster] != "local/c:tofu" || len(m.Dirs)+len(m.Images) != 2 {
		t.Errorf("parsed %+v", m)
	}
	if _, err := parseDemo([]string{"--machine-module", "./m", "--machine-image", "local/m:tofu"}); err == nil {
		t.Error("both a module and an image for the machine role were taken")
	}
}
