// Package walls_test checks the walls of DESIGN.md on each package's full
// dependency closure (`go list -deps`), which the linter's depguard, seeing
// direct imports only, cannot: a wall broken through a third package
// fails here.
package walls_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"captf.io/captf/internal/test/envtest"
)

const module = "captf.io/captf/"

// walls: the packages (go list patterns) whose whole closure may not
// contain any package under the forbidden import paths.
var walls = []struct {
	name      string
	packages  []string
	forbidden []string
	// allowed are packages under a forbidden path that may be linked.
	allowed []string
}{
	{"the API imports nothing of ours", []string{"./api/..."}, []string{module + "internal", module + "pkg", module + "cmd"}, nil},
	{"pkg never imports internal", []string{"./pkg/..."}, []string{module + "internal", module + "cmd"}, nil},
	{"the runner binary never links controller-runtime", []string{"./cmd/runner"}, []string{"sigs.k8s.io/controller-runtime"}, nil},
	{"the decision table links no client, no API machinery and nothing of ours", []string{"./internal/decide"},
		[]string{"k8s.io", "sigs.k8s.io", module + "internal", module + "pkg", module + "api"}, nil},
	{"the condition rules link no client and nothing of ours but the API and the decision table", []string{"./internal/conditions"},
		[]string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", module + "internal", module + "pkg", module + "cmd"}, []string{module + "internal/decide"}},
	{"the manager reads the runner's result document and never links the runner", []string{"./cmd/manager"},
		[]string{module + "internal/runner"}, []string{module + "internal/runner/result"}},
	{"the runner's result document links no client and nothing of ours but the API and plans", []string{"./internal/runner/result"},
		[]string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", module + "internal", module + "pkg", module + "cmd"}, []string{module + "internal/plan", module + "internal/canonjson"}},
	{"the live reports' records link no client and nothing of ours but the API and the condition rules", []string{"./internal/livereport"},
		[]string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", module + "internal", module + "pkg", module + "cmd"}, []string{module + "internal/conditions", module + "internal/decide"}},
	{"the manager never links the local environment", []string{"./cmd/manager"},
		[]string{module + "internal/localnode", module + "internal/devenv", module + "internal/test", module + "cmd/captf-dev"}, nil},
	{"tfcapi-lint links no client, no controller and no runtime", []string{"./cmd/tfcapi-lint"},
		[]string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", module + "internal/runner", module + "internal/workspace", module + "api"}, nil},
}

func TestWalls(t *testing.T) {
	for _, w := range walls {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			for _, v := range violations(t, w.packages, w.forbidden, w.allowed...) {
				t.Error(v)
			}
		})
	}
}

// The check itself sees a forbidden package reached through another one:
// internal/devenv links internal/runner only through internal/localnode.
func TestWallsSeeIndirectDependencies(t *testing.T) {
	got := violations(t, []string{"./internal/devenv"}, []string{module + "internal/runner"})
	if !slices.Contains(got, module+"internal/devenv links "+module+"internal/runner") {
		t.Fatalf("violations %v: internal/devenv linking internal/runner through internal/localnode not found", got)
	}
	// An allowed package is allowed, and only it.
	got = violations(t, []string{"./internal/devenv"}, []string{module + "internal"}, module+"internal/runner")
	if slices.Contains(got, module+"internal/devenv links "+module+"internal/runner") {
		t.Errorf("violations %v: the allowed internal/runner is reported", got)
	}
	if !slices.Contains(got, module+"internal/devenv links "+module+"internal/localnode") {
		t.Errorf("violations %v: internal/localnode, under the forbidden path and not allowed, is not reported", got)
	}
}

// violations lists each package of patterns whose closure holds a package
// under a forbidden path that is not one of allowed, as "<package> links
// <dependency>".
func violations(t *testing.T, patterns, forbidden []string, allowed ...string) []string {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"list", "-f", `{{.ImportPath}} {{join .Deps " "}}`}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if lines[0] == "" {
		t.Fatalf("go list found no package for %v", patterns)
	}
	var found []string
	for _, line := range lines {
		pkg, deps, _ := strings.Cut(line, " ")
		for _, dep := range strings.Fields(deps) {
			if slices.ContainsFunc(forbidden, func(f string) bool { return dep == f || strings.HasPrefix(dep, f+"/") }) && !slices.Contains(allowed, dep) {
				found = append(found, pkg+" links "+dep)
			}
		}
	}
	return found
}
