package main

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitFlags(t *testing.T) {
	testCases := []struct {
		name    string
		in      string
		build   []string
		test    []string
		p       int
		verbose bool
		err     string
	}{
		{
			name:  "make test's defaults",
			in:    "-count=1 -timeout=45m -parallel=8 -p=3 -trimpath -ldflags=-w",
			build: []string{"-trimpath", "-ldflags=-w"},
			test:  []string{"-test.count=1", "-test.timeout=45m", "-test.parallel=8"},
			p:     3,
		},
		{
			name:    "values in the next word, and -v",
			in:      "-run TestFlows -v -tags captfsoak -p 2",
			build:   []string{"-tags=captfsoak"},
			test:    []string{"-test.run=TestFlows", "-test.v"},
			p:       2,
			verbose: true,
		},
		{name: "-p defaults to one package at a time", in: "-short", test: []string{"-test.short"}, p: 1},
		{name: "a valued flag without its value", in: "-run", err: "flag -run needs a value"},
		{name: "a word that is no flag", in: "./...", err: `flag "./..."`},
		{name: "-p must be positive", in: "-p=0", err: "flag -p=0"},
		{name: "-json is refused, not ignored", in: "-json", err: "flag -json: not supported"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := splitFlags(strings.Fields(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.build, tc.build) || !slices.Equal(f.test, tc.test) || f.p != tc.p || f.verbose != tc.verbose {
				t.Errorf("got build %q test %q p %d verbose %v, want %q %q %d %v", f.build, f.test, f.p, f.verbose, tc.build, tc.test, tc.p, tc.verbose)
			}
		})
	}
}

func paths(ps []pkg) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ImportPath)
	}
	return out
}

func TestGroupsPlaceANamedPackageInItsOwnGroup(t *testing.T) {
	e2e, runner, lifecycle, canon := pkg{ImportPath: "m/test/e2e"}, pkg{ImportPath: "m/internal/runner"}, pkg{ImportPath: "m/test/lifecycle"}, pkg{ImportPath: "m/internal/canonjson"}
	patterns := [][]string{{"./test/e2e", "./internal/runner", "./..."}, {"./test/lifecycle"}}
	matched := [][]pkg{{e2e, runner, canon, e2e, lifecycle, runner}, {lifecycle}}
	got := groups(patterns, matched)
	if want := [][]string{{"m/test/e2e", "m/internal/runner", "m/internal/canonjson"}, {"m/test/lifecycle"}}; !slices.Equal(paths(got[0]), want[0]) || !slices.Equal(paths(got[1]), want[1]) {
		t.Errorf("got groups %q %q, want %q", paths(got[0]), paths(got[1]), want)
	}
}

func TestBatchesKeepBinaryNamesApart(t *testing.T) {
	got := batches([]pkg{{ImportPath: "m/internal/runner"}, {ImportPath: "m/cmd/runner"}, {ImportPath: "m/hack/release"}, {ImportPath: "m/internal/release"}, {ImportPath: "m/internal/jobs"}})
	want := [][]string{{"m/cmd/runner", "m/hack/release", "m/internal/jobs"}, {"m/internal/release", "m/internal/runner"}}
	if len(got) != len(want) {
		t.Fatalf("got %d batches, want %d", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(paths(got[i]), want[i]) {
			t.Errorf("batch %d: got %q, want %q", i, paths(got[i]), want[i])
		}
	}
}
