package runner_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/runnertest"
	"captf.io/captf/pkg/state"
)

func wantSteps(t *testing.T, res runner.Result, want ...string) {
	t.Helper()
	if got := runnertest.StepNames(res); !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
}

func wantOK(t *testing.T, res runner.Result, code int) {
	t.Helper()
	if code != runner.ExitOK || res.Error != nil {
		t.Fatalf("the run failed: exit %d, error %+v", code, res.Error)
	}
}

// The whole life of an object on both runtimes: apply writes the state
// Secret and its lock Lease with the documented names and labels; a plan
// reports a keyed hash and changes nothing; refresh, drift and destroy run
// their documented steps.
func TestLifecycle(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			f := newFixture(t, rt, "module")

			res, code := f.Run(runner.OpApply, nil)
			wantOK(t, res, code)
			wantSteps(t, res, "init", "validate", "apply")
			if res.Runtime.Version == "" || !res.Image.ProvidersMirror {
				t.Errorf("runtime version %q, providers mirror %v", res.Runtime.Version, res.Image.ProvidersMirror)
			}
			if res.Changes == nil || res.Changes.Add != 2 {
				t.Errorf("changes %+v, want 2 added", res.Changes)
			}
			secrets := f.StateSecrets()
			if len(secrets) != 1 || secrets[0].Name != state.SecretName(f.Suffix) {
				t.Fatalf("state Secrets %d, want one named %s", len(secrets), state.SecretName(f.Suffix))
			}
			for k, v := range map[string]string{
				"tfstate": "true", "tfstateSecretSuffix": f.Suffix, "tfstateWorkspace": "default",
				"captf.io/managed": "true", "captf.infrastructure.cluster.x-k8s.io/owner-kind": "TerraformCluster",
				"captf.infrastructure.cluster.x-k8s.io/owner-name": "demo", "cluster.x-k8s.io/cluster-name": "demo",
				"clusterctl.cluster.x-k8s.io/move": "",
			} {
				if got, ok := secrets[0].Labels[k]; !ok || got != v {
					t.Errorf("state Secret label %s = %q, want %q", k, got, v)
				}
			}
			f.WantReaderMatchesStatePull()
			lock := f.Lock()
			if lock.Labels["captf.io/managed"] != "true" {
				t.Errorf("lock Lease labels %v lack the CAPTF labels", lock.Labels)
			}
			if lock.Spec.HolderIdentity != nil && *lock.Spec.HolderIdentity != "" {
				t.Errorf("the lock is still held by %q after the run", *lock.Spec.HolderIdentity)
			}

			before := f.StateBytes()
			setInputs(f, map[string]any{"name": "demo", "generation": 2})
			res, code = f.Run(runner.OpPlan, nil)
			wantOK(t, res, code)
			wantSteps(t, res, "init", "validate", "plan", "show-json")
			if res.Plan == nil || !strings.HasPrefix(res.Plan.Hash, "p2:") || res.Plan.Replace != 1 {
				t.Fatalf("plan %+v, want a p2 hash and one replacement", res.Plan)
			}
			if !bytes.Equal(before, f.StateBytes()) {
				t.Error("a plan changed the state")
			}

			res, code = f.Run(runner.OpDrift, nil)
			wantOK(t, res, code)
			wantSteps(t, res, "init", "apply-refresh-only", "plan", "show-json")
			if res.Drift == nil || !res.Drift.Detected || res.Drift.Replace != 1 {
				t.Errorf("drift %+v, want one replacement detected", res.Drift)
			}

			setInputs(f, map[string]any{"name": "demo", "generation": 1})
			res, code = f.Run(runner.OpRefresh, nil)
			wantOK(t, res, code)
			wantSteps(t, res, "init", "apply-refresh-only")

			res, code = f.Run(runner.OpDestroy, nil)
			wantOK(t, res, code)
			wantSteps(t, res, "init", "destroy")
			if res.Changes == nil || res.Changes.Destroy != 2 {
				t.Errorf("changes %+v, want 2 destroyed", res.Changes)
			}
		})
	}
}

// A guarded apply stops before a replacement unless the plan is approved,
// and stopping changes nothing; an approval of another plan stops it too.
func TestGuardedApply(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			f := newFixture(t, rt, "module")
			guard := func(o *runner.Options) { o.GuardDeletes, o.InputsHash = true, "h2:gen2" }
			res, code := f.Run(runner.OpApply, guard)
			wantOK(t, res, code) // creating is not destructive
			wantSteps(t, res, "init", "validate", "plan", "show-json", "apply")

			res, code = f.Run(runner.OpApply, guard)
			wantOK(t, res, code)
			wantSteps(t, res, "init", "validate", "plan") // no changes: no apply

			setInputs(f, map[string]any{"name": "demo", "generation": 2})
			before := f.StateBytes()
			res, code = f.Run(runner.OpApply, guard)
			if code != runner.ExitFailure || res.Error == nil || res.Error.Kind != runner.KindBlocked {
				t.Fatalf("want a blocked result, got exit %d, %+v", code, res.Error)
			}
			if res.Plan == nil || res.Plan.Replace != 1 || !strings.HasPrefix(res.Plan.Hash, "p2:") {
				t.Errorf("a blocked result carries the plan: %+v", res.Plan)
			}
			if !bytes.Equal(before, f.StateBytes()) {
				t.Error("a blocked apply changed the state")
			}

			res, code = f.Run(runner.OpApply, func(o *runner.Options) { o.ExpectPlan = "p2:somethingelse" })
			if code != runner.ExitFailure || res.Error == nil || res.Error.Kind != runner.KindPlanChanged {
				t.Fatalf("want plan-changed, got exit %d, %+v", code, res.Error)
			}
			if !bytes.Equal(before, f.StateBytes()) {
				t.Error("a plan-changed apply changed the state")
			}

			planned, _ := f.Run(runner.OpPlan, nil)
			res, code = f.Run(runner.OpApply, func(o *runner.Options) { o.ExpectPlan = planned.Plan.Hash })
			wantOK(t, res, code)
			wantSteps(t, res, "init", "validate", "plan", "show-json", "apply")
			if bytes.Equal(before, f.StateBytes()) {
				t.Error("the approved apply did not change the state")
			}

			setInputs(f, map[string]any{"name": "demo", "generation": 3})
			res, code = f.Run(runner.OpApply, func(o *runner.Options) { guard(o); o.AllowDeletesHash = o.InputsHash })
			wantOK(t, res, code)
		})
	}
}
