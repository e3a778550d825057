package runner_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/runnertest"
	"captf.io/captf/pkg/state"
)

// Terraform splits a state over 1 MiB compressed across -part-N Secrets,
// and the state reader reads it back whole.
func TestTerraformChunksALargeState(t *testing.T) {
	f := newFixture(t, "terraform", "large")
	res, code := f.Run(runner.OpApply, nil)
	wantOK(t, res, code)
	secrets := f.StateSecrets()
	names := map[string]bool{}
	for _, s := range secrets {
		names[s.Name] = true
	}
	if len(secrets) < 2 || !names[state.SecretName(f.Suffix)] || !names[state.ChunkName(f.Suffix, 1)] {
		t.Fatalf("state Secrets %v, want the base and -part-1", names)
	}
	st, err := state.Decode(f.Suffix, secrets)
	if err != nil || st.ManagedResources != 1 || st.CompressedBytes <= state.ChunkSize {
		t.Fatalf("decoded %d resources from %d bytes: %v", st.ManagedResources, st.CompressedBytes, err)
	}
	f.WantReaderMatchesStatePull()
}

// OpenTofu cannot store a state over 1 MiB compressed: the write fails and
// the runtime leaves errored.tfstate, which the runner saves as a state
// backup; restoring that backup with Terraform brings the state back.
func TestOpenTofuOversizeStateIsRescuedAndRestoredWithTerraform(t *testing.T) {
	f := newFixture(t, "tofu", "large")
	res, code := f.Run(runner.OpApply, nil)
	if code != runner.ExitFailure || res.Error == nil || res.Error.Step != "apply" {
		t.Fatalf("want the apply to fail writing its state, got exit %d, %+v", code, res.Error)
	}
	if written := readResult(t, f.Opts.Result); written.Rescue == nil || *written.Rescue != *res.Rescue {
		t.Fatalf("the written result does not report the rescue: %+v", written.Rescue)
	}
	if res.Rescue == nil || res.Rescue.Serial < 1 || res.Rescue.Chunks < 2 {
		t.Fatalf("the rejected state was not rescued: %+v (summary %q)", res.Rescue, res.Error.Tail)
	}
	if !strings.Contains(res.Error.Tail, "captf.io/restore-state="+strconv.FormatInt(res.Rescue.Serial, 10)) {
		t.Errorf("the summary does not say how to restore: %q", res.Error.Tail)
	}

	var backups corev1.SecretList
	if err := env.Client.List(context.Background(), &backups, client.InNamespace(f.Namespace),
		client.MatchingLabels{"captf.io/state-backup": "true", "captf.io/state-backup-suffix": f.Suffix}); err != nil {
		t.Fatal(err)
	}
	if len(backups.Items) != res.Rescue.Chunks {
		t.Fatalf("%d backup Secrets, want %d", len(backups.Items), res.Rescue.Chunks)
	}
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "restore"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range backups.Items {
		if b.Labels["captf.io/managed"] != "true" || b.Labels["captf.infrastructure.cluster.x-k8s.io/owner-name"] != "demo" {
			t.Errorf("backup %s lacks the object's labels: %v", b.Name, b.Labels)
		}
		runnertest.Write(t, filepath.Join(cfg, "restore", b.Annotations["captf.io/state-backup-chunk"]), b.Data["tfstate"])
	}

	f.Opts.Bin = []string{runnertest.RuntimeBin(t, env, "terraform")}
	res, code = f.Run(runner.OpRestore, func(o *runner.Options) {
		o.Config, o.RestoreChunks, o.RestoreResources = cfg, len(backups.Items), 1
	})
	wantOK(t, res, code)
	st, err := state.Decode(f.Suffix, f.StateSecrets())
	// Terraform may bump the serial as it pushes; the lineage is the state's.
	if err != nil || st.ManagedResources != 1 || st.Lineage != backups.Items[0].Annotations["captf.io/state-backup-lineage"] || st.Serial < res2serial(t, backups.Items) {
		t.Fatalf("restored state: %+v, %v", st, err)
	}
}

func res2serial(t *testing.T, backups []corev1.Secret) int64 {
	t.Helper()
	n, err := strconv.ParseInt(backups[0].Annotations["captf.io/state-backup-serial"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A step that shrinks a chunked state (here a restore's push of a smaller
// state) makes Terraform delete the pieces it no longer needs; the
// manager's protection keeps them, and the next step's read (the
// restore's state list) would take them for part of the state. The runner
// lets them go between the steps.
func TestSurplusPiecesAreReleasedBetweenSteps(t *testing.T) {
	f := newFixture(t, "terraform", "large")
	res, code := f.Run(runner.OpApply, nil)
	wantOK(t, res, code)
	ctx := context.Background()
	pieces := f.StateSecrets()
	if len(pieces) < 2 {
		t.Fatalf("%d state Secrets: the state is not chunked", len(pieces))
	}
	_, raw, err := state.DecodeRaw(f.Suffix, pieces)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pieces { // as the manager protects them
		pieces[i].Finalizers = append(pieces[i].Finalizers, infrav1.StateProtectionFinalizer)
		if err := env.Client.Update(ctx, &pieces[i]); err != nil {
			t.Fatal(err)
		}
	}
	// The same state without its resources: one small piece.
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["resources"], doc["serial"] = []any{}, doc["serial"].(float64)+1
	small, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(small)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "restore"), 0o755); err != nil {
		t.Fatal(err)
	}
	runnertest.Write(t, filepath.Join(cfg, "restore", "0"), gz.Bytes())
	res, code = f.Run(runner.OpRestore, func(o *runner.Options) { o.Config, o.RestoreChunks = cfg, 1 })
	wantOK(t, res, code)
	left := f.StateSecrets()
	if len(left) != 1 || left[0].Name != state.SecretName(f.Suffix) {
		var names []string
		for _, s := range left {
			names = append(names, s.Name)
		}
		t.Errorf("state Secrets after the shrink: %v, want the base alone", names)
	}
	for i := range left {
		left[i].Finalizers = nil
		_ = env.Client.Update(ctx, &left[i])
	}
}
