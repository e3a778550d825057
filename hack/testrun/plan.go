package main

import (
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// args is testrun's command line: its own -bin-dir, go test's flags as
// GO_TEST_FLAGS holds them (split by who takes each: the build of the
// test binaries, or the binaries themselves as -test.<name>), then the
// package patterns of each group.
type args struct {
	binDir string
	build  []string
	test   []string
	// p is how many packages run at once (go test's -p).
	p int
	// verbose (-v) shows every package's output, not only a failed one's.
	verbose bool
	// timeout is the binaries' -test.timeout (go test's default, 10
	// minutes, when the flags set none; 0 for none): a binary still
	// running a minute after it is killed, as go test does.
	timeout time.Duration
	// groups holds the patterns of each group, in order.
	groups [][]string
}

// buildFlags are go test's flags that shape the test binary: they go to
// `go test -c` (and, but for vet, to go list). valued says which take a
// value.
var buildFlags = map[string]bool{
	"trimpath": false, "race": false, "cover": false, "a": false, "msan": false, "asan": false,
	"x": false, "work": false, "linkshared": false,
	"ldflags": true, "gcflags": true, "asmflags": true, "tags": true, "mod": true, "modfile": true,
	"covermode": true, "coverpkg": true, "buildvcs": true, "pgo": true, "overlay": true,
	"toolexec": true, "compiler": true, "gccgoflags": true, "installsuffix": true, "pkgdir": true, "vet": true,
}

// testFlags are the test binary's flags make test passes on; valued says
// which take a value.
var testFlags = map[string]bool{
	"v": false, "short": false, "failfast": false, "benchmem": false, "fullpath": false,
	"run": true, "skip": true, "timeout": true, "parallel": true, "count": true, "bench": true,
	"benchtime": true, "cpu": true, "shuffle": true, "list": true, "fuzz": true, "fuzztime": true,
	"fuzzminimizetime": true,
}

// refused are go test's flags that make no sense for a whole suite run
// this way, with what to do instead.
var refused = map[string]string{
	"json":         "run go test -json on the packages you want",
	"coverprofile": "run go test -coverprofile on the packages you want",
	"cpuprofile":   "go test takes it for one package only: run go test -cpuprofile on that package",
	"memprofile":   "go test takes it for one package only: run go test -memprofile on that package",
	"blockprofile": "go test takes it for one package only: run go test -blockprofile on that package",
	"mutexprofile": "go test takes it for one package only: run go test -mutexprofile on that package",
	"trace":        "go test takes it for one package only: run go test -trace on that package",
	"outputdir":    "no profile is written by make test",
	"exec":         "run go test -exec on the packages you want",
	"n":            "it builds no test binary to run",
	"c":            "make test builds the test binaries itself",
	"o":            "make test builds the test binaries itself",
	"args":         "put the flags before the packages",
}

// parseArgs reads testrun's command line: -bin-dir DIR, go test's flags
// (-name=value, -name value or -name; -test.name as -name), then the
// patterns, groups separated by --then.
func parseArgs(words []string) (args, error) {
	a := args{p: runtime.GOMAXPROCS(0), timeout: 10 * time.Minute}
	i := 0
	timeoutSet := false
	for ; i < len(words) && strings.HasPrefix(words[i], "-") && words[i] != "--then"; i++ {
		word := words[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(word, "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		if name == "" {
			return a, fmt.Errorf("flag %q: want -name or -name=value", word)
		}
		if why, ok := refused[name]; ok {
			return a, fmt.Errorf("flag -%s: not supported by make test: %s", name, why)
		}
		valued, isBuild := buildFlags[name]
		isTest := false
		if !isBuild {
			valued, isTest = testFlags[name]
			valued = valued || name == "p" || name == "bin-dir"
		}
		if !isBuild && !isTest && name != "p" && name != "bin-dir" {
			return a, fmt.Errorf("flag -%s: not a go test flag make test knows; run go test on the packages you want", name)
		}
		if valued && !hasValue {
			if i+1 == len(words) {
				return a, fmt.Errorf("flag -%s needs a value", name)
			}
			i++
			value, hasValue = words[i], true
		}
		switch {
		case name == "bin-dir":
			a.binDir = value
		case name == "p":
			if n, err := strconv.Atoi(value); err != nil || n < 1 {
				return a, fmt.Errorf("flag -p=%s: want a positive number of packages run at once", value)
			} else {
				a.p = n
			}
		case isBuild:
			a.build = append(a.build, flagWord(name, value, hasValue))
		default:
			switch name {
			case "v":
				a.verbose = !hasValue || value == "true"
			case "timeout":
				d, err := time.ParseDuration(value)
				if value == "0" {
					d, err = 0, nil
				}
				if err != nil || d < 0 {
					return a, fmt.Errorf("flag -timeout=%s: want a duration such as 45m, or 0 for none", value)
				}
				a.timeout, timeoutSet = d, true
			}
			a.test = append(a.test, flagWord("test."+name, value, hasValue))
		}
	}
	if !timeoutSet {
		a.test = append(a.test, flagWord("test.timeout", a.timeout.String(), true))
	}
	if a.binDir == "" || !filepath.IsAbs(a.binDir) {
		return a, fmt.Errorf("-bin-dir %q: want an absolute directory outside the checkout", a.binDir)
	}
	cur := []string{}
	for _, word := range words[i:] {
		switch {
		case word == "--then":
			a.groups, cur = append(a.groups, cur), []string{}
		case strings.HasPrefix(word, "-"):
			return a, fmt.Errorf("flag %s after the packages: put go test's flags before them", word)
		default:
			cur = append(cur, word)
		}
	}
	a.groups = append(a.groups, cur)
	return a, nil
}

// listFlags are the build flags go list takes too: those that choose a
// package's files (tags, -race's race tag, -mod) must reach both.
func (a args) listFlags() []string {
	var out []string
	for _, f := range a.build {
		name, _, _ := strings.Cut(strings.TrimPrefix(f, "-"), "=")
		if name != "vet" && name != "x" && name != "work" {
			out = append(out, f)
		}
	}
	return out
}

func flagWord(name, value string, hasValue bool) string {
	if hasValue {
		return "-" + name + "=" + value
	}
	return "-" + name
}

// pkg is a package with tests, as go list sees it.
type pkg struct {
	ImportPath string
	Dir        string
	// binary is its test binary's path once built.
	binary string
}

// groups places each package in one group: the one naming it exactly
// (without "..."), else the first whose pattern matched it. matched[i]
// holds the packages group i's patterns matched, in their order.
func groups(patterns [][]string, matched [][]pkg) [][]pkg {
	placed := map[string]bool{}
	out := make([][]pkg, len(matched))
	for i, ps := range matched {
		for _, p := range ps {
			g, ok := namedGroup(patterns, p)
			if placed[p.ImportPath] || (ok && g != i) {
				continue
			}
			placed[p.ImportPath] = true
			out[i] = append(out[i], p)
		}
	}
	return out
}

// namedGroup finds the first group that names p by its directory
// relative to the module (./test/e2e names captf.io/captf/test/e2e).
func namedGroup(patterns [][]string, p pkg) (int, bool) {
	for g, ps := range patterns {
		for _, pattern := range ps {
			if strings.Contains(pattern, "...") {
				continue
			}
			rel := strings.TrimPrefix(path.Clean(pattern), "./")
			if p.ImportPath == rel || strings.HasSuffix(p.ImportPath, "/"+rel) {
				return g, true
			}
		}
	}
	return 0, false
}

// batches splits packages so that no two of a batch have test binaries of
// the same name (go test -c -o DIR/ writes DIR/<last element>.test). Each
// package lands in the first batch free of its name, in import path
// order, so that a package keeps its batch, and its binary's path, from
// run to run (until a package of the same name is added before it).
func batches(pkgs []pkg) [][]pkg {
	sorted := slices.Clone(pkgs)
	slices.SortFunc(sorted, func(a, b pkg) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	var out [][]pkg
	var names []map[string]bool
	for _, p := range sorted {
		base := path.Base(p.ImportPath)
		i := 0
		for i < len(out) && names[i][base] {
			i++
		}
		if i == len(out) {
			out = append(out, nil)
			names = append(names, map[string]bool{})
		}
		out[i] = append(out[i], p)
		names[i][base] = true
	}
	return out
}
