package runner

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"captf.io/captf/internal/plan"
)

const planHash = "p2:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func baseResult() Result {
	return Result{
		Op:      "apply",
		Image:   Image{Ref: "ghcr.io/captf-io/module-images/noop-cluster@sha256:0123456789abcdef", ProvidersMirror: true},
		Runtime: Runtime{Command: []string{"/captf/runtime"}, Version: "1.12.6"},
		Steps: []Step{
			{Name: "init", Exit: 0, Seconds: 3.2},
			{Name: "validate", Exit: 0, Seconds: 0.8},
			{Name: "apply", Exit: 1, Seconds: 41.25},
		},
	}
}

func withError(r Result, tail string) Result {
	r.Error = &RunError{Kind: KindStep, Step: "apply", Tail: tail}
	return r
}

func withChanges(r Result) Result {
	n := 1
	r.Changes = &Changes{Add: 3, Change: 1, Destroy: 0, Import: &n}
	return r
}

func withPlan(r Result, resources int) Result {
	r.Plan = &PlanSummary{Hash: planHash, Summary: plan.Summary{Create: resources, Update: 2, Delete: 1, OutputChanges: 1}}
	for i := range resources {
		r.Plan.Resources = append(r.Plan.Resources, fmt.Sprintf(`module.role.module.node_groups["pool-%02d"].aws_autoscaling_group.this["zone-a"] (create)`, i))
	}
	return r
}

func withSteps(r Result, n int) Result {
	for i := range n {
		r.Steps = append(r.Steps, Step{Name: fmt.Sprintf("step-with-a-rather-long-name-%03d", i), Exit: 0, Seconds: 1.5})
	}
	return r
}

func TestMarshalDocumentShape(t *testing.T) {
	testCases := []struct {
		name   string
		result Result
		want   string
	}{
		{
			name: "success: null drift and error, no changes or plan",
			result: Result{Version: 7, Op: "destroy", Image: Image{Ref: "img:1"}, Runtime: Runtime{Version: "1.8.5"},
				Steps: []Step{{Name: "init", Seconds: 1.23456}}},
			want: `{"version":1,"op":"destroy","image":{"ref":"img:1","providersMirror":false},` +
				`"runtime":{"command":[],"version":"1.8.5"},"steps":[{"name":"init","exit":0,"seconds":1.235}],` +
				`"drift":null,"error":null}`,
		},
		{
			name: "image-layout: step is null, no step ran",
			result: Result{Op: "apply", Image: Image{Ref: "img:1"}, Runtime: Runtime{Command: []string{"/captf/runtime"}},
				Error: &RunError{Kind: KindImageLayout, Tail: "/captf/module holds no .tf, .tf.json, .tofu or .tofu.json file"}},
			want: `{"version":1,"op":"apply","image":{"ref":"img:1","providersMirror":false},` +
				`"runtime":{"command":["/captf/runtime"],"version":""},"steps":[],"drift":null,` +
				`"error":{"kind":"image-layout","step":null,"tail":"/captf/module holds no .tf, .tf.json, .tofu or .tofu.json file"}}`,
		},
		{
			name: "durations JSON cannot carry become 0; labels are not HTML-escaped",
			result: Result{Op: "plan", Steps: []Step{{Name: "a", Exit: 1, Seconds: math.NaN()}, {Name: "b", Seconds: math.Inf(1)}, {Name: "c", Seconds: -2}},
				Plan: &PlanSummary{Hash: planHash, Summary: plan.Summary{Create: 1, Resources: []string{"a.b (create) <&>"}}}},
			want: `{"version":1,"op":"plan","image":{"ref":"","providersMirror":false},"runtime":{"command":[],"version":""},` +
				`"steps":[{"name":"a","exit":1,"seconds":0},{"name":"b","exit":0,"seconds":0},{"name":"c","exit":0,"seconds":0}],` +
				`"drift":null,"error":null,"plan":{"hash":"` + planHash + `","create":1,"update":0,"replace":0,"delete":0,` +
				`"import":0,"move":0,"forget":0,"outputChanges":0,"resources":["a.b (create) <&>"]}}`,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Marshal(tc.result)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b, tc.want)
			}
		})
	}
}

func TestWriteResult(t *testing.T) {
	dir := t.TempDir()
	t.Run("overwrites a longer existing file in place", func(t *testing.T) {
		path := filepath.Join(dir, "termination-log")
		if err := os.WriteFile(path, []byte(strings.Repeat("stale ", 2000)), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := WriteResult(path, withError(baseResult(), "boom")); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got Result
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("file is not one JSON document: %v", err)
		}
		if got.Error.Tail != "boom" || got.Op != "apply" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("unwritable path", func(t *testing.T) {
		err := WriteResult(filepath.Join(dir, "missing", "termination-log"), baseResult())
		if err == nil || !strings.Contains(err.Error(), "writing result") {
			t.Errorf("err = %v", err)
		}
	})
}

func FuzzMarshalResult(f *testing.F) {
	f.Add("apply", "ghcr.io/x/y:1", "/captf/runtime", "1.12.6", "init", 1.5, 3, uint8(1), "apply", "boom", planHash, 5, 10, "aws_instance.a (create)", 4)
	f.Add(strings.Repeat("op", 3000), strings.Repeat("\xff", 5000), strings.Repeat("\x01", 3000), "", "", math.Inf(1), 500, uint8(3), strings.Repeat("s", 5000), strings.Repeat("€", 400), strings.Repeat("h", 9000), -1, 200, strings.Repeat("<", 700), 300)
	kinds := []ErrorKind{"", KindImageLayout, KindStep, KindInterrupted, KindBlocked, KindPlanChanged}
	f.Fuzz(func(t *testing.T, op, ref, cmd, version, stepName string, secs float64, nSteps int, kind uint8,
		errStep, tail, hash string, count, nResources int, resource string, nCmd int) {
		r := Result{
			Op:      op,
			Image:   Image{Ref: ref, ProvidersMirror: count%2 == 0},
			Runtime: Runtime{Command: slices.Repeat([]string{cmd}, clamp(nCmd, 0, 50)), Version: version},
		}
		for i := range clamp(nSteps, 0, 300) {
			r.Steps = append(r.Steps, Step{Name: stepName, Exit: i, Seconds: secs})
		}
		resources := slices.Repeat([]string{resource}, clamp(nResources, 0, 300))
		wantKind := kinds[int(kind)%len(kinds)]
		if wantKind != "" {
			r.Error = &RunError{Kind: wantKind, Step: errStep, Tail: tail}
		}
		if count%3 == 0 {
			r.Drift = &Drift{Drift: plan.Drift{Detected: true, Create: count, Update: count, Replace: count, Delete: count, Resources: resources}}
		}
		if count%5 != 0 {
			r.Plan = &PlanSummary{Hash: hash, Summary: plan.Summary{Create: count, Update: count, Replace: count, Delete: count,
				Import: count, Move: count, Forget: count, OutputChanges: count, Resources: resources}}
			r.Changes = &Changes{Add: count, Change: count, Destroy: count, Import: &count}
		}

		b, err := Marshal(r)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if len(b) > MaxResultBytes {
			t.Fatalf("%d bytes > %d", len(b), MaxResultBytes)
		}
		if !json.Valid(b) {
			t.Fatalf("invalid JSON: %s", b)
		}
		var got Result
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("does not decode: %v", err)
		}
		if got.Version != ResultVersion {
			t.Fatalf("version = %d", got.Version)
		}
		if !strings.HasPrefix(strings.ToValidUTF8(op, "\uFFFD"), got.Op) {
			t.Fatalf("op %q is not a prefix of %q", got.Op, op)
		}
		if wantKind == "" && got.Error != nil {
			t.Fatalf("error appeared: %+v", got.Error)
		}
		if wantKind != "" && (got.Error == nil || got.Error.Kind != wantKind) {
			t.Fatalf("error kind lost: %+v", got.Error)
		}
		if r.Plan != nil && (got.Plan == nil || got.Plan.Create != count || got.Plan.OutputChanges != count) {
			t.Fatalf("plan counts lost: %+v", got.Plan)
		}
		if r.Plan != nil && len(hash) <= 128 && got.Plan.Hash != strings.ToValidUTF8(hash, "\uFFFD") {
			t.Fatalf("plan hash %q changed to %q", hash, got.Plan.Hash)
		}
	})
}

func clamp(n, lo, hi int) int {
	return max(lo, min(n, hi))
}
