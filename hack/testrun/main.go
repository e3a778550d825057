// Command testrun is `make test`'s go test: it builds each package's test
// binary into a directory that outlives the run, and runs the binaries
// as go test would (in the package's directory, with the -test.* flags,
// -p packages at once), group after group.
//
// go test links every test binary again on each run: about 50 links of
// 3 to 135 MB, a seventh of the suite's CPU on two cores. `go test -c -o`
// leaves a binary whose build ID is up to date untouched, so here only
// the binaries of packages that changed, or that import one that did, are
// linked again.
//
//	go run ./hack/testrun -bin-dir DIR -flags "$GO_TEST_FLAGS" PATTERN... [--then PATTERN...]...
//
// Packages run in the order their patterns give them (the longest
// first); a package named exactly (./test/lifecycle) runs in the group
// naming it, not in an earlier group whose ./... matched it. A build
// failure fails the run before any test runs: an old binary is never run
// in place of one that did not build. The binaries are built without the
// checkout's paths (-trimpath), so another clone of the same code (CI's)
// finds them up to date; a lock file keeps two runs from building over
// each other's binaries.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"captf.io/captf/internal/filelock"
)

func main() {
	binDir := flag.String("bin-dir", "", "where the test binaries are kept between runs (outside the checkout)")
	goTestFlags := flag.String("flags", "", "go test's flags, as GO_TEST_FLAGS holds them")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *binDir, *goTestFlags, flag.Args(), os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "testrun: %v\n", err)
		os.Exit(1)
	}
}

var errFailed = errors.New("tests failed")

func run(ctx context.Context, binDir, goTestFlags string, args []string, out io.Writer) error {
	if binDir == "" || !filepath.IsAbs(binDir) {
		return fmt.Errorf("-bin-dir %q: want an absolute directory outside the checkout", binDir)
	}
	f, err := splitFlags(strings.Fields(goTestFlags))
	if err != nil {
		return fmt.Errorf("-flags: %w", err)
	}
	var patterns [][]string
	cur := []string{}
	for _, a := range args {
		if a == "--then" {
			patterns, cur = append(patterns, cur), []string{}
			continue
		}
		cur = append(cur, a)
	}
	patterns = append(patterns, cur)
	matched := make([][]pkg, len(patterns))
	for i, ps := range patterns {
		if matched[i], err = listTested(ctx, ps); err != nil {
			return err
		}
	}
	// One run at a time uses the binaries: another checkout's run
	// would link its own code over them between our build and our run.
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	lock := filepath.Join(binDir, "lock")
	locked := make(chan struct{})
	go func() {
		select {
		case <-locked:
		case <-time.After(2 * time.Second):
			fmt.Fprintf(out, "testrun: waiting for another make test to finish with %s\n", binDir)
		}
	}()
	unlock, err := filelock.Lock(ctx, lock)
	close(locked)
	if err != nil {
		return fmt.Errorf("locking %s: %w", lock, err)
	}
	defer unlock()
	gs := groups(patterns, matched)
	var all []pkg
	for _, g := range gs {
		all = append(all, g...)
	}
	built, err := build(ctx, binDir, f.build, all, out)
	if err != nil {
		return err
	}
	failed := false
	for _, g := range gs {
		for i := range g {
			g[i].binary = built[g[i].ImportPath]
		}
		if !runGroup(ctx, f, g, out) {
			failed = true
		}
	}
	if failed {
		return errFailed
	}
	return nil
}

// listTested lists the packages of patterns that have tests, in the
// patterns' order.
func listTested(ctx context.Context, patterns []string) ([]pkg, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}\t{{.Dir}}{{end}}"}, patterns...)...)
	cmd.Stderr = os.Stderr
	data, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(patterns, " "), err)
	}
	var pkgs []pkg
	for line := range strings.Lines(string(data)) {
		if imp, dir, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok {
			pkgs = append(pkgs, pkg{ImportPath: imp, Dir: dir})
		}
	}
	return pkgs, nil
}

// build builds the test binaries of pkgs in binDir, one go test -c per
// batch of distinct binary names, and returns each package's binary.
func build(ctx context.Context, binDir string, buildFlags []string, pkgs []pkg, out io.Writer) (map[string]string, error) {
	start := time.Now()
	built := map[string]string{}
	for i, batch := range batches(pkgs) {
		dir := filepath.Join(binDir, strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		args := append([]string{"test", "-c", "-o", dir + string(filepath.Separator)}, buildFlags...)
		for _, p := range batch {
			args = append(args, p.ImportPath)
			built[p.ImportPath] = filepath.Join(dir, filepath.Base(p.ImportPath)+".test")
		}
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building the test binaries (no test ran): %w", err)
		}
	}
	fmt.Fprintf(out, "testrun: %d test binaries up to date in %s (%s)\n", len(pkgs), binDir, time.Since(start).Round(100*time.Millisecond))
	return built, nil
}

// runGroup runs the binaries of g, f.p at a time in g's order, and
// reports each package as go test does once it is done: its output when
// it failed or under -v, then ok or FAIL with its time.
func runGroup(ctx context.Context, f flags, g []pkg, out io.Writer) bool {
	var mu sync.Mutex
	ok := true
	next := make(chan pkg)
	var wg sync.WaitGroup
	for range f.p {
		wg.Go(func() {
			for p := range next {
				text, elapsed, err := runPackage(ctx, f, p)
				mu.Lock()
				if err != nil || f.verbose {
					_, _ = out.Write(text)
				}
				if err != nil {
					ok = false
					fmt.Fprintf(out, "FAIL\t%s\t%.3fs\n", p.ImportPath, elapsed.Seconds())
				} else {
					fmt.Fprintf(out, "ok  \t%s\t%.3fs\n", p.ImportPath, elapsed.Seconds())
				}
				mu.Unlock()
			}
		})
	}
	for _, p := range g {
		next <- p
	}
	close(next)
	wg.Wait()
	return ok
}

// runPackage runs p's binary in p's directory, as go test does.
func runPackage(ctx context.Context, f flags, p pkg) ([]byte, time.Duration, error) {
	var buf bytes.Buffer
	if _, err := os.Stat(p.binary); err != nil {
		return []byte(fmt.Sprintf("testrun: go test -c wrote no test binary for %s: %v\n", p.ImportPath, err)), 0, err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, p.binary, append([]string{"-test.paniconexit0"}, f.test...)...)
	cmd.Dir = p.Dir
	cmd.Stdout, cmd.Stderr = &buf, &buf
	// The whole process group: a test's children (control planes,
	// managers, runtimes) go with it when the run is interrupted.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	return buf.Bytes(), time.Since(start), err
}
