package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/runnertest"
	"captf.io/captf/pkg/state"
)

// A broken image stops before any command runs.
func TestImageLayoutIsCheckedFirst(t *testing.T) {
	f := newFixture(t, "tofu", "module")
	testCases := []struct {
		name   string
		change func(o *runner.Options)
		want   string
	}{
		{"no module file at the top level", func(o *runner.Options) {
			empty := filepath.Join(t.TempDir(), "module")
			_ = os.MkdirAll(filepath.Join(empty, "nested"), 0o755)
			_ = os.WriteFile(filepath.Join(empty, "nested", "main.tf"), nil, 0o644)
			o.Module = empty
		}, "no .tf, .tf.json, .tofu or .tofu.json file"},
		{"runtime not executable", func(o *runner.Options) {
			bin := filepath.Join(t.TempDir(), "runtime")
			_ = os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o644)
			o.Bin = []string{bin}
		}, "is not executable"},
		{"runtime missing", func(o *runner.Options) { o.Bin = []string{"/nonexistent/runtime"} }, "is missing"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			res, code := f.Run(runner.OpApply, tc.change)
			if code != runner.ExitFailure || res.Error == nil || res.Error.Kind != runner.KindImageLayout {
				t.Fatalf("want image-layout, got exit %d, %+v", code, res.Error)
			}
			if len(res.Steps) != 0 {
				t.Errorf("commands ran: %v", runnertest.StepNames(res))
			}
			if !strings.Contains(res.Error.Tail, tc.want) {
				t.Errorf("summary %q lacks %q", res.Error.Tail, tc.want)
			}
		})
	}
}

// Bad input gets a clear result, never a panic.
func TestBadInputs(t *testing.T) {
	f := newFixture(t, "tofu", "module")
	testCases := []struct {
		name   string
		op     string
		change func(o *runner.Options)
		want   string
	}{
		{"missing config files", runner.OpApply, func(o *runner.Options) { o.Config = t.TempDir() }, "lack main.tf.json"},
		{"unreadable plan key", runner.OpPlan, func(o *runner.Options) { o.PlanKeyFile = "/nonexistent/key" }, "the plan key cannot be read"},
		{"short plan key", runner.OpApply, func(o *runner.Options) {
			short := filepath.Join(t.TempDir(), "key")
			_ = os.WriteFile(short, []byte("0123456789"), 0o600)
			o.PlanKeyFile, o.GuardDeletes = short, true
		}, "at least 32 are required"},
		{"corrupt restore chunk", runner.OpRestore, func(o *runner.Options) {
			cfg := t.TempDir()
			_ = os.MkdirAll(filepath.Join(cfg, "restore"), 0o755)
			_ = os.WriteFile(filepath.Join(cfg, "restore", "0"), []byte("not gzip"), 0o600)
			o.Config, o.RestoreChunks = cfg, 1
		}, "backup"},
		{"missing restore chunk", runner.OpRestore, func(o *runner.Options) { o.Config, o.RestoreChunks = t.TempDir(), 2 }, "backup"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			res, code := f.Run(tc.op, tc.change)
			if code != runner.ExitFailure || res.Error == nil || res.Error.Kind != runner.KindStep || res.Error.Step != "prepare" {
				t.Fatalf("want a prepare failure, got exit %d, %+v", code, res.Error)
			}
			if !strings.Contains(res.Error.Tail, tc.want) {
				t.Errorf("summary %q lacks %q", res.Error.Tail, tc.want)
			}
			if len(res.Steps) != 0 {
				t.Errorf("commands ran: %v", runnertest.StepNames(res))
			}
		})
	}
}

// A provider the mirror lacks fails init with a summary naming it; nothing
// is downloaded.
func TestProviderMissingFromTheMirror(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			f := newFixture(t, rt, "module")
			_ = os.WriteFile(filepath.Join(f.Opts.Module, "tls.tf"),
				[]byte(`terraform {
  required_providers {
    tls = { source = "hashicorp/tls" }
  }
}
`), 0o644)
			res, code := f.Run(runner.OpApply, nil)
			if code != runner.ExitFailure || res.Error == nil || res.Error.Step != "init" {
				t.Fatalf("want init to fail, got exit %d, %+v", code, res.Error)
			}
			if !strings.Contains(res.Error.Tail, "provider") || !strings.Contains(res.Error.Tail, "tls") {
				t.Errorf("summary %q does not name the missing provider", res.Error.Tail)
			}
		})
	}
}

// A restore pushes a backup's chunks as the state and lists it.
func TestRestore(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			f := newFixture(t, rt, "module")
			res, code := f.Run(runner.OpApply, nil)
			wantOK(t, res, code)
			backup := f.StateBytes()
			res, code = f.Run(runner.OpDestroy, nil)
			wantOK(t, res, code)

			cfg := t.TempDir()
			_ = os.MkdirAll(filepath.Join(cfg, "restore"), 0o755)
			runnertest.Write(t, filepath.Join(cfg, "restore", "0"), backup)
			res, code = f.Run(runner.OpRestore, func(o *runner.Options) { o.Config, o.RestoreChunks, o.RestoreResources = cfg, 1, 2 })
			wantOK(t, res, code)
			wantSteps(t, res, "init", "state-push", "state-list")
			got, err := state.Decode(f.Suffix, f.StateSecrets())
			if err != nil || got.ManagedResources != 2 {
				t.Fatalf("restored state: %d managed resources, %v", got.ManagedResources, err)
			}
		})
	}
}

// runnerCommand is `runner ARGS...` in a process of its own (signal tests
// need a real process): this test binary, made the runner by asRunnerEnv.
func runnerCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("locating the test binary: %v", err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), asRunnerEnv+"=1")
	return cmd
}

func args(f *runnertest.Fixture, op string) []string {
	a := []string{"run", "--op=" + op, "--bin=" + f.Opts.Bin[0], "--config=" + f.Opts.Config, "--module=" + f.Opts.Module,
		"--providers=" + f.Opts.Providers, "--workdir=" + f.Opts.Workdir, "--result=" + f.Opts.Result,
		"--lock-timeout=20s", "--stop-timeout=60s"}
	for _, bc := range f.Opts.BackendConfig {
		a = append(a, "--backend-config="+bc)
	}
	return a
}

func readResult(t *testing.T, path string) runner.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r runner.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("the result is not JSON: %v", err)
	}
	return r
}

// SIGTERM during an apply reaches the runtime, which writes the state and
// releases the lock before the runner reports an interruption.
func TestSigtermDuringApply(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			f := newFixture(t, rt, "slow")
			cmd := runnerCommand(t, args(f, runner.OpApply)...)
			logs, _ := os.Create(filepath.Join(f.Dir, "log"))
			cmd.Stdout, cmd.Stderr = logs, logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 2*time.Minute, func() bool {
				data, _ := os.ReadFile(filepath.Join(f.Dir, "log"))
				return strings.Contains(string(data), "time_sleep.wait: Creating...")
			})
			_ = cmd.Process.Signal(syscall.SIGTERM)
			time.Sleep(200 * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGTERM) // a second one changes nothing
			err := cmd.Wait()
			if code := exitCodeOf(err); code != runner.ExitFailure {
				t.Fatalf("exit %d, want 1", code)
			}
			res := readResult(t, f.Opts.Result)
			if res.Error == nil || res.Error.Kind != runner.KindInterrupted || res.Error.Step != "apply" {
				t.Fatalf("want interrupted during apply, got %+v", res.Error)
			}
			got, err := state.Decode(f.Suffix, f.StateSecrets())
			if err != nil || got.ManagedResources < 1 {
				t.Fatalf("the interrupted apply left no state: %v", err)
			}
			if h := f.Lock().Spec.HolderIdentity; h != nil && *h != "" {
				t.Errorf("the lock is still held by %q", *h)
			}
		})
	}
}

// A lock left by a killed run is cleared by the next run's --force-unlock;
// an already released lock counts as cleared.
func TestForceUnlock(t *testing.T) {
	t.Parallel() // mostly waits out the retried apply's time_sleep
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, rt, "slow")
			cmd := runnerCommand(t, args(f, runner.OpApply)...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			logs, _ := os.Create(filepath.Join(f.Dir, "log"))
			cmd.Stdout, cmd.Stderr = logs, logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 2*time.Minute, func() bool {
				data, _ := os.ReadFile(filepath.Join(f.Dir, "log"))
				return strings.Contains(string(data), "time_sleep.wait: Creating...")
			})
			// SIGKILL the whole process group: nothing releases the lock.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			var lockID string
			waitFor(t, 30*time.Second, func() bool {
				h := f.Lock().Spec.HolderIdentity
				if h != nil {
					lockID = *h
				}
				return lockID != ""
			})
			res, code := f.Run(runner.OpRefresh, func(o *runner.Options) { o.LockTimeout = time.Second })
			if code != runner.ExitFailure {
				t.Fatalf("a run against a held lock succeeded: %+v", res)
			}
			// The retry of the killed apply clears the stale lock. (A refresh
			// would not do here: Terraform 1.8 refuses to apply a refresh-only
			// plan whose only changes are outputs, as after this kill.)
			res, code = f.Run(runner.OpApply, func(o *runner.Options) { o.ForceUnlock = lockID })
			wantOK(t, res, code)
			wantSteps(t, res, "init", "force-unlock", "validate", "apply")
			res, code = f.Run(runner.OpRefresh, func(o *runner.Options) { o.ForceUnlock = lockID })
			wantOK(t, res, code)
			wantSteps(t, res, "init", "force-unlock", "apply-refresh-only")
		})
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("timed out waiting")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// A SIGTERM that arrives before the first step starts no command and
// still reports the interruption.
func TestSigtermBeforeTheFirstStep(t *testing.T) {
	f := newFixture(t, "tofu", "module")
	o := f.Opts
	o.Op = runner.OpApply
	stop := make(chan struct{})
	close(stop)
	var logs runnertest.SyncBuffer
	res, code := runner.Run(o, runner.Env{Environ: os.Environ(), Stdout: &logs, Stderr: &logs, Stop: stop})
	if code != runner.ExitFailure || res.Error == nil || res.Error.Kind != runner.KindInterrupted || res.Error.Step != "" {
		t.Fatalf("want an interruption naming no step, got exit %d, %+v", code, res.Error)
	}
	if len(res.Steps) != 0 || len(f.StateSecrets()) != 0 {
		t.Errorf("commands ran: %v", runnertest.StepNames(res))
	}
}
