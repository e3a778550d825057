package plan

import (
	"os"
	"path/filepath"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	seeds := [][]byte{
		[]byte(`{"format_version":"1.2"}`),
		doc([]string{
			res("a.a", "update", `"before":{"t":["x",{"k":1}]},"after":{"t":["y",{"k":null}]},"after_unknown":{"t":[false,{"k":true}]},"before_sensitive":{"t":true},"after_sensitive":{}`, ""),
			res("a.b", "delete,create", `"importing":{"id":"1"}`, `"previous_address":"a.c"`),
			res("a.d", "create", `"after":{"n":1.5e3}`, `"deposed":"01"`),
			res("data.a.e", "read", "", ""),
		}, map[string]string{"o": changeObj("update", `"before":"a","after":"b"`)}),
		[]byte(`{"format_version":"1.2","resource_changes":[{"address":"a.b","change":{"actions":["x"]}}]}`),
		[]byte(`{"format_version":"1.2","resource_changes":[`),
	}
	fixtures, _ := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	for _, name := range fixtures {
		if b, err := os.ReadFile(name); err == nil {
			seeds = append(seeds, b)
		}
	}
	for _, s := range seeds {
		f.Add(s)
	}
}

func FuzzSummarize(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, planJSON []byte) {
		s, err := Summarize(planJSON)
		if err != nil {
			return
		}
		if len(s.Resources) > MaxResources {
			t.Errorf("%d resource entries, want <= %d", len(s.Resources), MaxResources)
		}
		for _, e := range s.Resources {
			if len(e) == 0 || len(e) > MaxResourceEntryLen {
				t.Errorf("resource entry of %d bytes", len(e))
			}
		}
		p, err := Parse(planJSON)
		if err != nil {
			t.Fatalf("Summarize succeeded but Parse failed: %v", err)
		}
		if p.Destructive() && s.Delete+s.Replace == 0 {
			t.Error("destructive plan without a delete or replace count")
		}
		if d := p.Drift(); len(d.Resources) > MaxDriftResources || d.Detected != (d.Create+d.Update+d.Replace+d.Delete > 0) {
			t.Errorf("inconsistent drift %+v", d)
		}
	})
}

func FuzzFingerprint(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, planJSON []byte) {
		h, err := Fingerprint(planJSON, testKey)
		if err != nil {
			return
		}
		again, err := Fingerprint(planJSON, testKey)
		if err != nil || again != h {
			t.Fatalf("second fingerprint %q, %v; want %q", again, err, h)
		}
		s, err := Summarize(planJSON)
		if err != nil {
			t.Fatalf("Fingerprint succeeded but Summarize failed: %v", err)
		}
		if s.Empty() != (h == EmptyPlanHash) {
			t.Errorf("Empty() = %v but hash %s", s.Empty(), h)
		}
	})
}
