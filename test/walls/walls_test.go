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
}{
	{"the API imports nothing of ours", []string{"./api/..."}, []string{module + "internal", module + "pkg", module + "cmd"}},
	{"pkg never imports internal", []string{"./pkg/..."}, []string{module + "internal", module + "cmd"}},
	{"the runner binary never links controller-runtime", []string{"./cmd/runner"}, []string{"sigs.k8s.io/controller-runtime"}},
	{"the decision table links no client, no API machinery and nothing of ours", []string{"./internal/decide"},
		[]string{"k8s.io", "sigs.k8s.io", module + "internal", module + "pkg", module + "api"}},
	{"the condition rules link no client and nothing of ours but the API and the decision table", []string{"./internal/conditions"},
		[]string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", module + "internal/workspace", module + "internal/roles", module + "pkg"}},
	{"the manager never links the local environment", []string{"./cmd/manager"},
		[]string{module + "internal/localnode", module + "internal/devenv", module + "internal/test", module + "cmd/captf-dev"}},
	{"tfcapi-lint links no client, no controller and no runtime", []string{"./cmd/tfcapi-lint"},
		[]string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", module + "internal/runner", module + "internal/workspace", module + "api"}},
}

func TestWalls(t *testing.T) {
	for _, w := range walls {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			for _, v := range violations(t, w.packages, w.forbidden) {
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
}

// violations lists each package of patterns whose closure holds a package
// under a forbidden path, as "<package> links <dependency>".
func violations(t *testing.T, patterns, forbidden []string) []string {
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
			if slices.ContainsFunc(forbidden, func(f string) bool { return dep == f || strings.HasPrefix(dep, f+"/") }) {
				found = append(found, pkg+" links "+dep)
			}
		}
	}
	return found
}
