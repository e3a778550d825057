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
//	go run ./hack/testrun -bin-dir DIR $GO_TEST_FLAGS PATTERN... [--then PATTERN...]...
//
// Packages run in the order their patterns give them (the longest
// first); a package named exactly (./test/lifecycle) runs in the group
// naming it, not in an earlier group whose ./... matched it. A build
// failure fails the run before any test runs: an old binary is never run
// in place of one that did not build. The binaries are built without the
// checkout's paths (-trimpath), so another clone of the same code (CI's)
// finds them up to date; a lock file keeps two runs from building over
// each other's binaries. go test's flags that make no sense here
// (-json, the profiles, -exec) are refused, naming what to do instead.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"captf.io/captf/internal/filelock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "testrun: %v\n", err)
		os.Exit(1)
	}
}

var errFailed = errors.New("tests failed")

func run(ctx context.Context, words []string, out io.Writer) error {
	a, err := parseArgs(words)
	if err != nil {
		return err
	}
	matched := make([][]pkg, len(a.groups))
	for i, ps := range a.groups {
		if matched[i], err = listTested(ctx, a.listFlags(), ps); err != nil {
			return err
		}
	}
	// One run at a time uses the binaries: another checkout's run
	// would link its own code over them between our build and our run.
	if err := os.MkdirAll(a.binDir, 0o755); err != nil {
		return err
	}
	lock := filepath.Join(a.binDir, "lock")
	locked := make(chan struct{})
	go func() {
		select {
		case <-locked:
		case <-time.After(2 * time.Second):
			fmt.Fprintf(out, "testrun: waiting for another make test to finish with %s\n", a.binDir)
		}
	}()
	unlock, err := filelock.Lock(ctx, lock)
	close(locked)
	if err != nil {
		return fmt.Errorf("locking %s: %w", lock, err)
	}
	defer unlock()
	gs := groups(a.groups, matched)
	var all []pkg
	for _, g := range gs {
		all = append(all, g...)
	}
	built, err := build(ctx, a.binDir, a.build, all, out)
	if err != nil {
		return err
	}
	failed := false
	for _, g := range gs {
		for i := range g {
			g[i].binary = built[g[i].ImportPath]
		}
		if !runGroup(ctx, a, g, out) {
			failed = true
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: the packages not reported above did not run")
		}
	}
	if failed {
		return errFailed
	}
	return nil
}

// listTested lists the packages of patterns that have tests, in the
// patterns' order.
func listTested(ctx context.Context, buildFlags, patterns []string) ([]pkg, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	args := append([]string{"list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}\t{{.Dir}}{{end}}"}, buildFlags...)
	cmd := exec.CommandContext(ctx, "go", append(args, patterns...)...)
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

// runGroup runs the binaries of g, a.p at a time in g's order, and
// reports each package as go test does once it is done: its output when
// it failed or under -v, then ok or FAIL with its time. It starts no
// package once ctx is done.
func runGroup(ctx context.Context, a args, g []pkg, out io.Writer) bool {
	var mu sync.Mutex
	ok := true
	next := make(chan pkg)
	var wg sync.WaitGroup
	for range a.p {
		wg.Go(func() {
			for p := range next {
				text, elapsed, err := runPackage(ctx, a, p)
				mu.Lock()
				if err != nil || a.verbose {
					_, _ = out.Write(endLine(text))
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
		if ctx.Err() != nil {
			break
		}
		next <- p
	}
	close(next)
	wg.Wait()
	return ok
}

// runPackage runs p's binary in p's directory, as go test does: given
// max(5 s, timeout/10) to close its output once it exited, and killed
// (with SIGQUIT first, for its goroutines' stacks) a minute after its
// -test.timeout (or that delay, if longer); killed at once when the run
// is interrupted.
func runPackage(ctx context.Context, a args, p pkg) ([]byte, time.Duration, error) {
	var buf bytes.Buffer
	if _, err := os.Stat(p.binary); err != nil {
		return []byte(fmt.Sprintf("testrun: go test -c wrote no test binary for %s: %v\n", p.ImportPath, err)), 0, err
	}
	waitDelay, killAfter := max(5*time.Second, a.timeout/10), time.Duration(0)
	if a.timeout > 0 {
		killAfter = a.timeout + max(time.Minute, waitDelay)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, killAfter)
		defer cancel()
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, p.binary, append([]string{"-test.paniconexit0"}, a.test...)...)
	cmd.Dir = p.Dir
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.Cancel = func() error {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return cmd.Process.Signal(syscall.SIGQUIT)
		}
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = waitDelay
	// The binary dies with testrun even if testrun is killed outright;
	// the signal is tied to the thread that started it, kept for the run.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	elapsed := time.Since(start)
	text := endLine(buf.Bytes())
	switch {
	case err == nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		text = fmt.Appendf(text, "*** Test killed with quit: ran too long (%s).\n", killAfter)
	case errors.Is(err, exec.ErrWaitDelay):
		text = fmt.Appendf(text, "*** Test I/O incomplete %s after exiting.\n", waitDelay)
	default:
		text = fmt.Appendf(text, "%v\n", err)
	}
	return text, elapsed, err
}

// endLine ends text with a newline, unless it is empty, so that the
// next line printed starts a line of its own (golang.org/issue/49317).
func endLine(text []byte) []byte {
	if len(text) > 0 && text[len(text)-1] != '\n' {
		return append(text, '\n')
	}
	return text
}
