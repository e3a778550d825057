package main

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	testCases := []struct {
		name    string
		in      string
		build   []string
		test    []string
		p       int
		verbose bool
		groups  [][]string
		err     string
	}{
		{
			name:   "make test's command line",
			in:     "-bin-dir /c/testbin -count=1 -timeout=45m -parallel=8 -p=3 -trimpath -ldflags=-w ./test/e2e ./... --then ./test/lifecycle",
			build:  []string{"-trimpath", "-ldflags=-w"},
			test:   []string{"-test.count=1", "-test.timeout=45m", "-test.parallel=8"},
			p:      3,
			groups: [][]string{{"./test/e2e", "./..."}, {"./test/lifecycle"}},
		},
		{
			name:    "values in the next word, -v, and a flag written as the binary's",
			in:      "-bin-dir /c -test.run TestFlows -v -tags captfsoak -p 2 ./x",
			build:   []string{"-tags=captfsoak"},
			test:    []string{"-test.run=TestFlows", "-test.v", "-test.timeout=10m0s"},
			p:       2,
			verbose: true,
			groups:  [][]string{{"./x"}},
		},
		{name: "-p defaults to go test's, GOMAXPROCS", in: "-bin-dir /c -short ./x", test: []string{"-test.short", "-test.timeout=10m0s"}, p: runtime.GOMAXPROCS(0), groups: [][]string{{"./x"}}},
		{name: "-bin-dir is required", in: "-count=1 ./x", err: `-bin-dir "": want an absolute directory`},
		{name: "-bin-dir must be absolute", in: "-bin-dir testbin ./x", err: `-bin-dir "testbin"`},
		{name: "a valued flag without its value", in: "-bin-dir /c -run", err: "flag -run needs a value"},
		{name: "a flag after the packages", in: "-bin-dir /c ./x -v", err: "flag -v after the packages"},
		{name: "-p must be positive", in: "-bin-dir /c -p=0 ./x", err: "flag -p=0"},
		{name: "a bad timeout", in: "-bin-dir /c -timeout=soon ./x", err: "flag -timeout=soon: want a duration"},
		{name: "-json is refused, not ignored", in: "-bin-dir /c -json ./x", err: "flag -json: not supported by make test: run go test -json"},
		{name: "a profile is refused: go test writes one for one package", in: "-bin-dir /c -cpuprofile=cpu.out ./x", err: "flag -cpuprofile: not supported"},
		{name: "an unknown flag is refused, not passed to every binary", in: "-bin-dir /c -frobnicate ./x", err: "flag -frobnicate: not a go test flag"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := parseArgs(strings.Fields(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.build, tc.build) || !slices.Equal(a.test, tc.test) || a.p != tc.p || a.verbose != tc.verbose {
				t.Errorf("got build %q test %q p %d verbose %v, want %q %q %d %v", a.build, a.test, a.p, a.verbose, tc.build, tc.test, tc.p, tc.verbose)
			}
			if !slices.EqualFunc(a.groups, tc.groups, slices.Equal) {
				t.Errorf("got groups %q, want %q", a.groups, tc.groups)
			}
		})
	}
}

func TestListFlagsLeaveOutWhatGoListRefuses(t *testing.T) {
	a := args{build: []string{"-tags=captfsoak", "-vet=off", "-race", "-x", "-trimpath"}}
	if got, want := a.listFlags(), []string{"-tags=captfsoak", "-race", "-trimpath"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
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
