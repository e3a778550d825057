package runner_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/runnertest"
	"captf.io/captf/pkg/state"
)

// BenchmarkApplyOverhead compares the wall time of `runner run --op=apply`
// with the same runtime commands run directly (version -json, init,
// validate -json, apply), on the same module against the same API server,
// each iteration applying into a fresh state. It reports runner/direct;
// the target is at most 1.03.
func BenchmarkApplyOverhead(b *testing.B) {
	for _, rt := range runtimes {
		b.Run(rt, func(b *testing.B) {
			var direct, viaRunner time.Duration
			for i := 0; i < b.N; i++ {
				f := newBenchFixture(b, rt)
				viaRunner += timed(b, func() {
					if _, code := f.Run(runner.OpApply, nil); code != runner.ExitOK {
						b.Fatal("the runner's apply failed")
					}
				})
				g := newBenchFixture(b, rt)
				direct += timed(b, func() { applyByHand(b, g) })
			}
			b.ReportMetric(float64(viaRunner)/float64(direct), "runner/direct")
			b.ReportMetric(float64(direct.Milliseconds())/float64(b.N), "direct-ms/op")
		})
	}
}

func timed(b *testing.B, f func()) time.Duration {
	b.Helper()
	start := time.Now()
	f()
	return time.Since(start)
}

func newBenchFixture(b *testing.B, rt string) *runnertest.Fixture {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	return newFixture(b, rt, "module")
}

// direct runs the apply's commands by hand, as a user would, in a root
// prepared the same way.
func applyByHand(b *testing.B, f *runnertest.Fixture) {
	b.Helper()
	root := filepath.Join(f.Opts.Workdir, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{runner.MainFile, runner.TfvarsFile} {
		data, err := os.ReadFile(filepath.Join(f.Opts.Config, name))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	cli, _, err := runner.WriteCLIConfig(f.Opts.Workdir, f.Opts.Providers)
	if err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+cli, "TF_DATA_DIR="+filepath.Join(f.Opts.Workdir, ".terraform"),
		"TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1")
	lock := "-lock-timeout=20s"
	init := []string{"init", "-input=false", "-no-color", lock}
	for _, bc := range f.Opts.BackendConfig {
		init = append(init, "-backend-config="+bc)
	}
	for _, args := range [][]string{
		{"version", "-json"}, init, {"validate", "-json", "-no-color"},
		{"apply", "-input=false", "-no-color", lock, "-auto-approve", "-var-file=" + runner.TfvarsFile},
	} {
		cmd := exec.Command(f.Opts.Bin[0], args...)
		cmd.Dir, cmd.Env = root, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	if _, err := state.Decode(f.Suffix, f.StateSecrets()); err != nil {
		b.Fatalf("the direct apply wrote no state: %v", err)
	}
}
