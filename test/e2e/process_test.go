package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/filelock"
	"captf.io/captf/internal/setup"
	"captf.io/captf/internal/test/envtest"
)

// devProcess is a captf-dev command run as a user runs it, in a process of
// its own: the test reads its stdout line by line and keeps its stderr in
// a file.
type devProcess struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	stderr string

	lines  chan string   // stdout, closed at its end
	exited chan struct{} // closed once the process is reaped
	err    error         // how it exited; read only after exited is closed

	mu  sync.Mutex
	out []string // every stdout line so far
}

// processEnv is an environment `captf-dev up --without-manager` runs in a
// process of its own, with its own state directory, for `captf-dev
// manager` processes to serve.
type processEnv struct {
	root       string   // the checkout
	dir        string   // the test's files: the binary, the logs, the state directory
	bin        string   // captf-dev built from the checkout
	env        []string // the processes' environment
	kubeconfig string   // the admin kubeconfig up writes
	up         *devProcess
}

// startWithoutManager builds captf-dev (go build with buildFlags) and
// starts `captf-dev up --without-manager` in a directory named prefix*,
// waiting until it is ready. The directory is removed when the test passes
// and kept (and named) when it fails.
func startWithoutManager(t *testing.T, ctx context.Context, prefix string, buildFlags ...string) *processEnv {
	t.Helper()
	return startEnv(t, ctx, prefix, buildFlags)
}

// startEnv is startWithoutManager with up's flags besides
// --without-manager (such as --kubeadm).
func startEnv(t *testing.T, ctx context.Context, prefix string, buildFlags []string, upFlags ...string) *processEnv {
	t.Helper()
	tools := toolsOrSkip(t)
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Short, for the in-process node's unix sockets (see startShared).
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the environment's files are kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	e := &processEnv{root: root, dir: dir, bin: buildDev(t, ctx, root, buildFlags...),
		kubeconfig: filepath.Join(dir, "cache", "captf", "dev", "kubeconfig")}
	// Its own state directory through XDG_CACHE_HOME, as `captf-dev`
	// documents; Go keeps its build cache for the manager image's build.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	e.env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "GOCACHE="+strings.TrimSpace(string(gocache)), "KUBECONFIG=")
	shareMachineCaches(t, filepath.Join(dir, "cache"))
	e.up = startDev(t, "up", e.bin, root, dir, e.env, append([]string{"--tools", tools, "--repo", root, "up", "--without-manager"}, upFlags...)...)
	// A test that does not stop up itself (or failed before it could)
	// stops it here: SIGTERM first, for up stops the control plane it
	// started, whose processes a SIGKILL of up's group would leave
	// running.
	t.Cleanup(func() {
		select {
		case <-e.up.exited:
		default:
			if err := e.up.stop(2 * time.Minute); err != nil {
				t.Logf("stopping up: %v", err)
			}
		}
		e.up.killGroup()
	})
	// On a machine whose Go build cache is cold, up's first build of the
	// manager image compiles the manager from scratch: minutes, once.
	e.up.waitLine("ready", 10*time.Minute)
	return e
}

// shareMachineCaches links, in the cache directory cache (an
// environment's XDG_CACHE_HOME), the image store and the directory of the
// manager image's binaries to this machine's, as the tool cache is shared:
// the images are built by recipe and the binaries linked again only when
// the checkout changed, and doing either again per environment would only
// cost time (test/install covers a store of its own).
func shareMachineCaches(t testing.TB, cache string) {
	t.Helper()
	store, err := devenv.DefaultImageStore()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := devenv.ManagerBinaries()
	if err != nil {
		t.Fatal(err)
	}
	for _, shared := range []string{store, filepath.Dir(bins)} {
		if err := os.MkdirAll(shared, 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(cache, "captf", filepath.Base(shared))
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(shared, link); err != nil {
			t.Fatal(err)
		}
	}
}

// startManager starts `captf-dev manager args...` against the environment
// and waits until it prints ready.
func (e *processEnv) startManager(t *testing.T, name string, args ...string) *devProcess {
	t.Helper()
	p := startDev(t, name, e.bin, e.root, e.dir, e.env, append([]string{"manager"}, args...)...)
	t.Cleanup(p.killGroup)
	p.waitLine("ready", time.Minute)
	return p
}

// flow is a flow in namespace ns of the environment, with a clientset for
// watches. The environment runs in its own process: only its API and
// checkout are known here (no local node to read runs from).
func (e *processEnv) flow(t *testing.T, ns string) (*flow, kubernetes.Interface) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(adminConfig(t, e.kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	return &flow{t: t, ns: ns, env: &devenv.Env{Client: adminClient(t, e.kubeconfig), Repo: e.root}}, cs
}

// adminConfig reads the admin kubeconfig of an environment.
func adminConfig(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func adminClient(t *testing.T, kubeconfig string) client.Client {
	t.Helper()
	s, err := setup.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	// A logger of its own: the package's controller-runtime logger is the
	// shared environment's to set.
	c, err := client.New(adminConfig(t, kubeconfig), client.Options{Scheme: s, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// buildDev builds cmd/captf-dev from the checkout at root, with the go
// build flags given, into a directory of this machine's cache kept per
// set of flags (beside the manager image's binaries): go build leaves a
// binary there as it is while it is up to date, where one in a test's
// own directory was linked again on every run (8 CPU seconds). Builds
// into one directory take turns, and each test runs a link of its own
// to the binary it built (removed after it), which another checkout's
// build cannot replace.
func buildDev(t testing.TB, ctx context.Context, root string, flags ...string) string {
	t.Helper()
	bins, err := devenv.ManagerBinaries()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(strings.Join(flags, "\x00")))
	dir := filepath.Join(filepath.Dir(bins), fmt.Sprintf("captf-dev-%x", sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(dir, ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	bin := filepath.Join(dir, "captf-dev")
	build := exec.CommandContext(ctx, "go", append(append([]string{"build"}, flags...), "-o", bin, "./cmd/captf-dev")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/captf-dev: %v\n%s", err, out)
	}
	own, err := os.CreateTemp(dir, "captf-dev-*")
	if err != nil {
		t.Fatal(err)
	}
	_ = own.Close()
	if err := os.Remove(own.Name()); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(bin, own.Name()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(own.Name()) })
	return own.Name()
}

// startDev starts bin with args in a process group of its own (so that
// what it starts can be stopped with it should the test fail), stderr in
// logDir/<name>.log.
func startDev(t testing.TB, name, bin, dir, logDir string, env []string, args ...string) *devProcess {
	t.Helper()
	p := &devProcess{t: t, name: name, stderr: filepath.Join(logDir, name+".log"),
		lines: make(chan string, 1024), exited: make(chan struct{})}
	stderr, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir, p.cmd.Env, p.cmd.Stderr = dir, env, stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out = append(p.out, sc.Text())
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for lines this late; the transcript has them
			}
		}
		close(p.lines)
		p.err = p.cmd.Wait()
		_ = stderr.Close()
		close(p.exited)
	}()
	return p
}

// waitLine waits until the process prints the line want, failing the test
// when it exits first or timeout passes.
func (p *devProcess) waitLine(want string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				<-p.exited
				p.t.Fatalf("%s exited (%v) before printing %q\n%s", p.name, p.err, want, p.transcript())
			}
			if line == want {
				return
			}
		case <-deadline.C:
			p.t.Fatalf("%s printed no line %q within %s\n%s", p.name, want, timeout, p.transcript())
		}
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (p *devProcess) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("killing %s: %v", p.name, err)
	}
	<-p.exited
}

// stop sends SIGTERM and returns how the process exited, or an error when
// it is still running after timeout.
func (p *devProcess) stop(timeout time.Duration) error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s had already exited: %w", p.name, p.err)
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(timeout):
		return fmt.Errorf("%s still runs %s after SIGTERM", p.name, timeout)
	}
}

// killGroup kills whatever is left of the process and of what it started.
func (p *devProcess) killGroup() {
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// transcript is the process's stdout so far and the end of its stderr.
func (p *devProcess) transcript() string {
	p.mu.Lock()
	out := strings.Join(p.out, "\n")
	p.mu.Unlock()
	errLog, _ := os.ReadFile(p.stderr)
	return fmt.Sprintf("stdout:\n%s\nstderr (%s, last 8 kB):\n%s", out, p.stderr, tail(errLog, 8<<10))
}
