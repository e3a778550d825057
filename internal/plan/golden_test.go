package plan

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/<runtime>/<case>.golden from the fixtures")

// goldenKey is the fixed plan key of the golden fingerprints.
var goldenKey = []byte("captf-plan-golden-test-key-0032b")

var (
	runtimes  = []string{"tofu", "terraform"}
	realCases = []string{"create", "empty", "update", "replace", "replace-again", "delete", "output"}
)

// golden is what a fixture's .golden file records.
type golden struct {
	Summary     Summary `json:"summary"`
	Empty       bool    `json:"empty"`
	Destructive bool    `json:"destructive"`
	Drift       Drift   `json:"drift"`
	Hash        string  `json:"hash"`
}

// readFixture returns the `show -json` document testdata/generate.sh saved
// for a runtime and case; it skips the test when the fixtures were never
// generated (the runtimes come from the tool cache).
func readFixture(t *testing.T, runtime, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", runtime, name+".json"))
	if os.IsNotExist(err) {
		t.Skipf("no %s fixtures: run internal/plan/testdata/generate.sh, then go test ./internal/plan/ -update", runtime)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGolden(t *testing.T) {
	for _, runtime := range runtimes {
		for _, name := range realCases {
			t.Run(runtime+"/"+name, func(t *testing.T) {
				p := mustParse(t, readFixture(t, runtime, name))
				hash, err := p.Fingerprint(goldenKey)
				if err != nil {
					t.Fatal(err)
				}
				s := p.Summary()
				got, err := json.MarshalIndent(golden{Summary: s, Empty: s.Empty(), Destructive: p.Destructive(), Drift: p.Drift(), Hash: hash}, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, '\n')
				path := filepath.Join("testdata", runtime, name+".golden")
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (regenerate with go test ./internal/plan/ -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs (regenerate with -update if intended):\n got %s\nwant %s", path, got, want)
				}
			})
		}
	}
}

// TestRealPlans checks, on plans both runtimes really wrote, what a user
// relies on: a re-plan of the same state and inputs keeps its approval,
// any other plan does not.
func TestRealPlans(t *testing.T) {
	for _, runtime := range runtimes {
		t.Run(runtime, func(t *testing.T) {
			plans := map[string]*Plan{}
			hashes := map[string]string{}
			for _, name := range realCases {
				plans[name] = mustParse(t, readFixture(t, runtime, name))
				h, err := plans[name].Fingerprint(goldenKey)
				if err != nil {
					t.Fatal(err)
				}
				hashes[name] = h
			}

			if hashes["replace"] != hashes["replace-again"] {
				t.Errorf("two plans of the same state and inputs hash differently: %s vs %s", hashes["replace"], hashes["replace-again"])
			}
			for _, a := range realCases {
				for _, b := range realCases {
					if a < b && (a != "replace" || b != "replace-again") && hashes[a] == hashes[b] {
						t.Errorf("plans %s and %s share the hash %s", a, b, hashes[a])
					}
				}
			}
			otherKey := bytes.Repeat([]byte{0x5a}, 32)
			if h, _ := plans["replace"].Fingerprint(otherKey); h == hashes["replace"] {
				t.Error("another plan key gives the same hash")
			}

			empty := plans["empty"].Summary()
			if hashes["empty"] != EmptyPlanHash || !empty.Empty() {
				t.Errorf("no-change plan: hash %s, Empty() %v; want EmptyPlanHash, true", hashes["empty"], empty.Empty())
			}

			testCases := []struct {
				name        string
				destructive bool
				want        func(Summary) bool
				listed      string
			}{
				{name: "create", want: func(s Summary) bool { return s.Create == 6 && s.Update+s.Replace+s.Delete == 0 && s.OutputChanges == 4 }, listed: "null_resource.this (create)"},
				{name: "update", want: func(s Summary) bool { return s.Update == 1 && s.Create+s.Replace+s.Delete == 0 }, listed: "terraform_data.label (update)"},
				{name: "replace", destructive: true, want: func(s Summary) bool { return s.Replace == 1 && s.Create+s.Update+s.Delete == 0 }, listed: "null_resource.this (replace)"},
				{name: "delete", destructive: true, want: func(s Summary) bool { return s.Delete == 1 && s.Create+s.Update+s.Replace == 0 }, listed: "local_file.this[0] (delete)"},
				{name: "output", want: func(s Summary) bool { return s.OutputChanges == 1 && len(s.Resources) == 0 && !s.Empty() }},
			}
			for _, tc := range testCases {
				p := plans[tc.name]
				s := p.Summary()
				if p.Destructive() != tc.destructive {
					t.Errorf("%s: Destructive() = %v, want %v", tc.name, p.Destructive(), tc.destructive)
				}
				if !tc.want(s) {
					t.Errorf("%s: unexpected summary %+v", tc.name, s)
				}
				if tc.listed != "" && !slices.Contains(s.Resources, tc.listed) {
					t.Errorf("%s: resources %q do not list %q", tc.name, s.Resources, tc.listed)
				}
			}
		})
	}
}
