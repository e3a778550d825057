package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/runnertest"
)

var env *envtest.Env

// asRunnerEnv set to 1 makes this test binary the runner command: the
// signal tests need a runner process of its own, and cmd/runner's main is
// runner.Main alone, so they start this binary again instead of building
// and linking cmd/runner.
const asRunnerEnv = "CAPTF_RUNNER_TEST_AS_RUNNER"

func TestMain(m *testing.M) {
	if os.Getenv(asRunnerEnv) == "1" {
		os.Exit(runner.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

var runtimes = runnertest.Runtimes

// newFixture lays out a test module of testdata/ for a TerraformCluster,
// with inputs name=demo, generation=1.
func newFixture(t testing.TB, runtime, module string) *runnertest.Fixture {
	t.Helper()
	f := runnertest.New(t, env, runtime, filepath.Join("testdata", module), "TerraformCluster")
	setInputs(f, map[string]any{"name": "demo", "generation": 1})
	return f
}

// setInputs writes a root calling the test module with vars, shaped as the
// manager renders roots: a partial kubernetes backend, one variable per
// input, module "role", sensitive re-exported outputs.
func setInputs(f *runnertest.Fixture, vars map[string]any) {
	f.T.Helper()
	variables, args := map[string]any{}, map[string]any{"source": "../../module"}
	for name := range vars {
		variables[name] = map[string]any{}
		args[name] = "${var." + name + "}"
	}
	main := map[string]any{
		"terraform": map[string]any{"backend": map[string]any{"kubernetes": map[string]any{}}},
		"variable":  variables,
		"module":    map[string]any{"role": args},
		"output": map[string]any{
			"pet":       map[string]any{"value": "${module.role.pet}", "sensitive": true},
			"server_id": map[string]any{"value": "${module.role.server_id}", "sensitive": true},
		},
	}
	f.SetInputs(runnertest.MustJSON(f.T, main), vars)
}
