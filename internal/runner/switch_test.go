package runner_test

import (
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/runnertest"
	"captf.io/captf/pkg/state"
)

// Switching an object's image to the other runtime, on real state (each
// run in a fresh working directory, as in a new pod). On a state of one
// Secret, both directions work. On a state Terraform split across -part-N
// Secrets, every OpenTofu run refuses before any command reads or writes
// the state, says why and what to do, and Terraform carries on afterwards.
// (Subtest names stay short: a provider's socket path must fit 108 bytes.)
func TestSwitchingRuntimes(t *testing.T) {
	t.Run("small", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "tofu", "module")
		res, code := f.Run(runner.OpApply, nil)
		wantOK(t, res, code)
		for i, rt := range []string{"terraform", "tofu"} {
			f.Opts.Bin = []string{runnertest.RuntimeBin(t, env, rt)}
			f.Opts.Workdir = filepath.Join(f.Dir, "w"+strconv.Itoa(i))
			setInputs(f, map[string]any{"name": "demo", "generation": i + 2})
			res, code := f.Run(runner.OpApply, nil)
			wantOK(t, res, code)
			if st, err := state.Decode(f.Suffix, f.StateSecrets()); err != nil || st.ManagedResources == 0 || len(f.StateSecrets()) != 1 {
				t.Fatalf("after the %s apply: %+v, %v", rt, st, err)
			}
		}
	})
	t.Run("chunked", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "terraform", "large")
		res, code := f.Run(runner.OpApply, nil)
		wantOK(t, res, code)
		before := versions(f.StateSecrets())
		if len(before) < 2 {
			t.Fatalf("%d state Secrets: the state is not chunked", len(before))
		}
		f.Opts.Bin = []string{runnertest.RuntimeBin(t, env, "tofu")}
		f.Opts.Workdir = filepath.Join(f.Dir, "wo")
		for _, op := range []string{runner.OpApply, runner.OpRefresh, runner.OpDestroy} {
			res, code := f.Run(op, nil)
			if code != runner.ExitFailure || res.Error == nil || res.Error.Kind != runner.KindStep || res.Error.Step != runner.StepPrepare {
				t.Fatalf("%s on OpenTofu: exit %d, error %+v; want a failure in step prepare", op, code, res.Error)
			}
			for _, want := range []string{"split across 2 Secrets", state.ChunkName(f.Suffix, 1), "OpenTofu 1.", "Go back to a Terraform image", "shrink the state below 1 MiB"} {
				if !strings.Contains(res.Error.Tail, want) {
					t.Errorf("%s: the summary %q does not say %q", op, res.Error.Tail, want)
				}
			}
			if len(res.Steps) != 0 {
				t.Errorf("%s: steps %v ran; want none", op, runnertest.StepNames(res))
			}
			if after := versions(f.StateSecrets()); !maps.Equal(after, before) {
				t.Fatalf("%s: the state Secrets changed: %v, were %v", op, after, before)
			}
		}
		f.Opts.Bin = []string{runnertest.RuntimeBin(t, env, "terraform")}
		f.Opts.Workdir = filepath.Join(f.Dir, "wt")
		res, code = f.Run(runner.OpRefresh, nil)
		wantOK(t, res, code)
		f.WantReaderMatchesStatePull()
	})
}

// versions maps the Secrets' names to their resourceVersions.
func versions(secrets []corev1.Secret) map[string]string {
	out := map[string]string{}
	for _, s := range secrets {
		out[s.Name] = s.ResourceVersion
	}
	return out
}
