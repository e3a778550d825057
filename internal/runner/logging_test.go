package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/runnertest"
)

// runLogged runs the runner and returns its result and everything it wrote
// to the pod log.
func runLogged(f *runnertest.Fixture, op string, environ []string) (runner.Result, string) {
	f.T.Helper()
	o := f.Opts
	o.Op = op
	var logs runnertest.SyncBuffer
	res, _ := runner.Run(o, runner.Env{Environ: environ, Stdout: &logs, Stderr: &logs, Stop: make(chan struct{})})
	return res, logs.String()
}

// The plan document (show -json) carries every input value, sensitive ones
// included; it never reaches the log. Runner-owned variables are dropped
// and logged by name only.
func TestLogsCarryNoInputValues(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			f := newFixture(t, rt, "module")
			const token = "tok-SENSITIVE-input-0123456789"
			const leaked = "LEAKED-through-TF_VAR-987654321"
			setInputs(f, map[string]any{"name": "demo", "generation": 1, "token": token})
			res, logs := runLogged(f, runner.OpPlan, append(os.Environ(), "TF_VAR_name="+leaked, "KUBE_CONFIG_PATH=/nonexistent"))
			if res.Error != nil || res.Plan == nil {
				t.Fatalf("plan failed: %+v\n%s", res.Error, logs)
			}
			if strings.Contains(logs, token) {
				t.Error("the log holds a sensitive input value")
			}
			if strings.Contains(logs, leaked) {
				t.Error("the log holds the value of a dropped variable")
			}
			if line := lineWith(logs, "Ignoring environment variables the runner owns: "); !strings.Contains(line, "KUBE_CONFIG_PATH") || !strings.Contains(line, "TF_VAR_name") {
				t.Errorf("the dropped names are not logged: %q", line)
			}
			if !strings.Contains(logs, "module.role.random_pet.this will be created") {
				t.Errorf("the plan's human output is not in the log:\n%s", logs)
			}
		})
	}
}

// A credential value in a failure is replaced by (sensitive) in the summary.
func TestFailureSummaryRedactsCredentials(t *testing.T) {
	f := newFixture(t, "tofu", "failing")
	const credential = "cred-abcdefghijklmnopqrstuvwxyz"
	if err := os.MkdirAll(f.Opts.Credentials, 0o700); err != nil {
		t.Fatal(err)
	}
	runnertest.Write(t, filepath.Join(f.Opts.Credentials, "CLOUD_TOKEN"), []byte(credential))
	setInputs(f, map[string]any{"name": credential})
	res, code := f.Run(runner.OpApply, nil)
	if code != runner.ExitFailure || res.Error == nil || res.Error.Step != "apply" {
		t.Fatalf("want the apply to fail, got %+v", res.Error)
	}
	if strings.Contains(res.Error.Tail, credential) || !strings.Contains(res.Error.Tail, "(sensitive)") {
		t.Errorf("the summary is not redacted: %q", res.Error.Tail)
	}
}

// A provider error that echoes a secret value never shows it, whatever
// kind of value it is: an identity value shorter than 16 bytes under a
// harmless name, or a value of the object's spec.jobs.env (a plain value
// or a secretKeyRef: the pod gets both as environment variables, and the
// Job names them with --redact-env). Neither the failure summary nor the
// written result (the termination message the manager turns into
// status.lastRun, conditions and events) carries it.
func TestRedactsEachKind(t *testing.T) {
	testCases := []struct {
		name  string
		value string
		set   func(t *testing.T, f *runnertest.Fixture, value string)
	}{
		{"identity", "eu-west-9", func(t *testing.T, f *runnertest.Fixture, value string) {
			if err := os.MkdirAll(f.Opts.Credentials, 0o700); err != nil {
				t.Fatal(err)
			}
			runnertest.Write(t, filepath.Join(f.Opts.Credentials, "REGION"), []byte(value))
		}},
		{"env", "acct-4711", func(t *testing.T, f *runnertest.Fixture, value string) {
			t.Setenv("ACCOUNT", value)
			f.Opts.RedactEnv = []string{"ACCOUNT"}
		}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "tofu", "failing")
			f.Opts.Credentials = filepath.Join(f.Dir, "credentials")
			tc.set(t, f, tc.value)
			setInputs(f, map[string]any{"name": tc.value})
			res, code := f.Run(runner.OpApply, nil)
			if code != runner.ExitFailure || res.Error == nil || res.Error.Step != "apply" {
				t.Fatalf("want the apply to fail, got %+v", res.Error)
			}
			if strings.Contains(res.Error.Tail, tc.value) || !strings.Contains(res.Error.Tail, "(sensitive)") {
				t.Errorf("the summary is not redacted: %q", res.Error.Tail)
			}
			written, err := os.ReadFile(f.Opts.Result)
			if err != nil || strings.Contains(string(written), tc.value) {
				t.Errorf("the written result carries the value (%v): %s", err, written)
			}
		})
	}
}

func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
