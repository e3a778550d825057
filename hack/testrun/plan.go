package main

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// flags is GO_TEST_FLAGS split by who takes each flag: the build of the
// test binaries, the binaries themselves (as -test.<name>), or testrun.
type flags struct {
	build []string
	test  []string
	// p is how many packages run at once (go test's -p).
	p int
	// verbose (-v) shows every package's output, not only a failed one's.
	verbose bool
}

// buildFlags are go test's flags that shape the test binary: they go to
// `go test -c`. valued says which take a value.
var buildFlags = map[string]bool{
	"trimpath": false, "race": false, "cover": false, "a": false, "msan": false, "asan": false,
	"ldflags": true, "gcflags": true, "asmflags": true, "tags": true, "mod": true, "modfile": true,
	"covermode": true, "coverpkg": true, "buildvcs": true, "pgo": true, "overlay": true,
}

// valuedTestFlags are the test binary's flags that take a value; every
// other one is a boolean.
var valuedTestFlags = map[string]bool{
	"run": true, "skip": true, "timeout": true, "parallel": true, "count": true, "bench": true,
	"benchtime": true, "cpu": true, "shuffle": true, "list": true, "fuzz": true, "fuzztime": true,
	"fuzzminimizetime": true, "coverprofile": true, "cpuprofile": true, "memprofile": true,
	"blockprofile": true, "mutexprofile": true, "trace": true, "outputdir": true,
}

// splitFlags sorts go test's flags (as GO_TEST_FLAGS writes them:
// -name=value, -name value or -name) into the build's, the binaries' and
// testrun's own.
func splitFlags(args []string) (flags, error) {
	f := flags{p: 1}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !strings.HasPrefix(arg, "-") || name == "" {
			return f, fmt.Errorf("flag %q: want -name or -name=value", arg)
		}
		valued, isBuild := buildFlags[name]
		if !isBuild {
			valued = valuedTestFlags[name] || name == "p"
		}
		if valued && !hasValue {
			if i+1 == len(args) {
				return f, fmt.Errorf("flag -%s needs a value", name)
			}
			i++
			value, hasValue = args[i], true
		}
		switch {
		case name == "json":
			return f, fmt.Errorf("flag -json: not supported by make test; run go test -json on the packages you want")
		case name == "p":
			if _, err := fmt.Sscanf(value, "%d", &f.p); err != nil || f.p < 1 {
				return f, fmt.Errorf("flag -p=%s: want a positive number of packages run at once", value)
			}
		case isBuild:
			f.build = append(f.build, flagWord(name, value, hasValue))
		default:
			if name == "v" && (!hasValue || value == "true") {
				f.verbose = true
			}
			f.test = append(f.test, flagWord("test."+name, value, hasValue))
		}
	}
	return f, nil
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
	named := map[string]int{}
	for i, ps := range patterns {
		for _, p := range ps {
			if !strings.Contains(p, "...") {
				named[strings.TrimPrefix(path.Clean(p), "./")] = i
			}
		}
	}
	placed := map[string]bool{}
	out := make([][]pkg, len(matched))
	for i, ps := range matched {
		for _, p := range ps {
			g, ok := namedGroup(named, p)
			if placed[p.ImportPath] || (ok && g != i) {
				continue
			}
			placed[p.ImportPath] = true
			out[i] = append(out[i], p)
		}
	}
	return out
}

// namedGroup finds the group that named p by its directory relative to
// the module (./test/e2e names captf.io/captf/test/e2e).
func namedGroup(named map[string]int, p pkg) (int, bool) {
	for rel, g := range named {
		if p.ImportPath == rel || strings.HasSuffix(p.ImportPath, "/"+rel) {
			return g, true
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
