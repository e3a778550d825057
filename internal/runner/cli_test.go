package runner_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"captf.io/captf/internal/runner"
)

func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	result := filepath.Join(dir, "result.json")
	testCases := []struct {
		name     string
		args     []string
		code     int
		stderr   string
		flagsErr bool // a result naming the flags step is written
	}{
		{"no command", nil, runner.ExitUsage, "usage:", false},
		{"unknown command", []string{"explode"}, runner.ExitUsage, `unknown command "explode"`, false},
		{"copy without destination", []string{"copy"}, runner.ExitUsage, "exactly one argument", false},
		{"copy with two destinations", []string{"copy", "a", "b"}, runner.ExitUsage, "exactly one argument", false},
		{"copy into a missing directory", []string{"copy", filepath.Join(dir, "missing", "runner")}, runner.ExitFailure, "runner copy:", false},
		{"version", []string{"version"}, runner.ExitOK, "", false},
		{"run without op", []string{"run", "--result=" + result}, runner.ExitUsage, "--op is required", true},
		{"run with unknown op", []string{"run", "--op=explode", "--result=" + result}, runner.ExitUsage, `unknown --op "explode"`, true},
		{"run with unknown flag", []string{"run", "--op=apply", "--bogus", "--result", result}, runner.ExitUsage, "flag provided but not defined: -bogus", true},
		{"run with a bad duration", []string{"run", "--op=apply", "--lock-timeout=soon", "--result=" + result}, runner.ExitUsage, "lock-timeout", true},
		{"run with arguments", []string{"run", "--op=apply", "--result=" + result, "extra"}, runner.ExitUsage, "unexpected arguments", true},
		{"restore without chunks", []string{"run", "--op=restore", "--result=" + result}, runner.ExitUsage, "--restore-chunks", true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(result)
			var stdout, stderr bytes.Buffer
			code := runner.Main(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.stderr)
			}
			if tc.flagsErr {
				res := readResult(t, result)
				if res.Error == nil || res.Error.Kind != runner.KindStep || res.Error.Step != "flags" {
					t.Errorf("the result does not name the flags step: %+v", res.Error)
				}
			}
		})
	}
}

func TestCopyInstallsAnExecutable(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "runner")
	if code := runner.Main([]string{"copy", dest}, &bytes.Buffer{}, &bytes.Buffer{}); code != runner.ExitOK {
		t.Fatalf("exit %d", code)
	}
	st, err := os.Stat(dest)
	if err != nil || st.Mode().Perm() != 0o755 || st.Size() == 0 {
		t.Fatalf("copied binary: %v, mode %v", err, st.Mode())
	}
}

func TestDocumentedFlagDefaults(t *testing.T) {
	o, err := runner.ParseRunFlags([]string{"--op=apply", "--backend-config=a=1", "--backend-config=b=2"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := runner.Options{
		Op: "apply", Bin: []string{"/captf/runtime"}, Config: "/captf/config", Module: "/captf/module",
		Providers: "/captf/providers", Workdir: "/captf/work", Result: "/dev/termination-log",
		BackendConfig: []string{"a=1", "b=2"}, LockTimeout: 5 * time.Minute, StopTimeout: time.Minute,
		PlanKeyFile: "/captf/plan-key/key", Credentials: "/var/run/captf/credentials",
	}
	if got := o; got.Op != want.Op || strings.Join(got.Bin, " ") != strings.Join(want.Bin, " ") || got.Config != want.Config ||
		got.Module != want.Module || got.Providers != want.Providers || got.Workdir != want.Workdir || got.Result != want.Result ||
		strings.Join(got.BackendConfig, " ") != strings.Join(want.BackendConfig, " ") || got.LockTimeout != want.LockTimeout ||
		got.StopTimeout != want.StopTimeout || got.PlanKeyFile != want.PlanKeyFile || got.Credentials != want.Credentials {
		t.Errorf("options\n got %+v\nwant %+v", got, want)
	}
	o, err = runner.ParseRunFlags([]string{"--op=apply", "--bin=/usr/bin/env", "--bin=tofu", "--event-object=v1/X/ns/n/uid", "--job-name=j"}, &bytes.Buffer{})
	if err != nil || strings.Join(o.Bin, " ") != "/usr/bin/env tofu" {
		t.Errorf("--bin repeated gives %v, %v (the manager's event flags must be accepted)", o.Bin, err)
	}
}
