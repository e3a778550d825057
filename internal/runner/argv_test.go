package runner_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/runnertest"
)

// recorder wraps the real runtime: it appends its arguments to a log, then
// execs the runtime in its place (same process, so signals reach it).
func recorder(t *testing.T, f *runnertest.Fixture) (bin []string, log string) {
	t.Helper()
	log = filepath.Join(f.Dir, "argv.log")
	wrapper := filepath.Join(f.Dir, "wrap.sh")
	runnertest.Write(t, wrapper, []byte("#!/bin/sh\necho \"$*\" >> '"+log+"'\nexec '"+f.Opts.Bin[0]+"' \"$@\"\n"))
	if err := os.Chmod(wrapper, 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{wrapper}, log
}

func recorded(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(log)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// Each operation runs exactly the documented commands with exactly the
// documented flags, in order (module-author guide §6.2).
func TestCommandsCarryTheDocumentedFlags(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			f := newFixture(t, rt, "module")
			bin, log := recorder(t, f)
			f.Opts.Bin = bin
			f.Opts.LockTimeout = 1500e6 // 1.5s: rounded up, never down
			init := "init -input=false -no-color -lock-timeout=2s"
			for _, bc := range f.Opts.BackendConfig {
				init += " -backend-config=" + bc
			}
			planFile := filepath.Join(f.Opts.Workdir, runner.PlanFile)
			testCases := []struct {
				op     string
				change func(*runner.Options)
				want   []string
			}{
				{runner.OpApply, nil, []string{"version -json", init, "validate -json -no-color",
					"apply -input=false -no-color -lock-timeout=2s -auto-approve -var-file=terraform.tfvars.json"}},
				{runner.OpApply, func(o *runner.Options) { o.GuardDeletes = true }, []string{"version -json", init, "validate -json -no-color",
					"plan -input=false -no-color -lock-timeout=2s -detailed-exitcode -var-file=terraform.tfvars.json -out=" + planFile}},
				{runner.OpRefresh, func(o *runner.Options) { o.ForceUnlock = "no-such-lock" }, []string{"version -json", init, "force-unlock -force no-such-lock",
					"apply -input=false -no-color -lock-timeout=2s -refresh-only -auto-approve -var-file=terraform.tfvars.json"}},
				{runner.OpDrift, nil, []string{"version -json", init,
					"apply -input=false -no-color -lock-timeout=2s -refresh-only -auto-approve -var-file=terraform.tfvars.json",
					"plan -input=false -no-color -lock-timeout=2s -detailed-exitcode -refresh=false -var-file=terraform.tfvars.json -out=" + planFile}},
				{runner.OpPlan, nil, []string{"version -json", init, "validate -json -no-color",
					"plan -input=false -no-color -lock-timeout=2s -detailed-exitcode -var-file=terraform.tfvars.json -out=" + planFile}},
				{runner.OpDestroy, nil, []string{"version -json", init,
					"destroy -input=false -no-color -lock-timeout=2s -auto-approve -var-file=terraform.tfvars.json"}},
			}
			for _, tc := range testCases {
				res, code := f.Run(tc.op, tc.change)
				if code != runner.ExitOK {
					t.Fatalf("%s failed: %+v", tc.op, res.Error)
				}
				if got := recorded(t, log); !slices.Equal(got, tc.want) {
					t.Errorf("%s ran\n  %s\nwant\n  %s", tc.op, strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
				}
			}
		})
	}
}
