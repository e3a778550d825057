// Package install runs captf-dev as a module author does: installed with
// `go install captf.io/captf/cmd/captf-dev@<version>` and run in a
// directory of their own, far from any CAPTF checkout.
package install

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"captf.io/captf/internal/test/envtest"
)

// release returns the version the test publishes the committed tree
// at, one per commit (the module cache never holds two contents for one
// version), and removes it from the module cache when the test ends.
func release(t *testing.T, repo string) string {
	t.Helper()
	head, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := "v0.0.1-installtest.h" + strings.TrimSpace(string(head))[:12]
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cache := strings.TrimSpace(string(modcache))
		src := filepath.Join(cache, "captf.io", "captf@"+version)
		_ = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		_ = os.RemoveAll(src)
		downloads, _ := filepath.Glob(filepath.Join(cache, "cache", "download", "captf.io", "captf", "@v", version+".*"))
		for _, f := range downloads {
			_ = os.Remove(f)
		}
	})
	return version
}

// proxy writes a Go module proxy directory serving this repository's
// committed tree as captf.io/captf@version, as a release tag would.
func proxy(t *testing.T, repo, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proxy")
	at := filepath.Join(dir, "captf.io", "captf", "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.CreateFromVCS(zf, module.Version{Path: "captf.io/captf", Version: version}, repo, "HEAD", ""); err != nil {
		t.Fatalf("zipping HEAD: %v", err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := exec.Command("git", "-C", repo, "show", "HEAD:go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{version + ".mod": gomod, version + ".info": info, "list": []byte(version + "\n")} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// install runs `go install captf.io/captf/cmd/captf-dev@version` through
// the proxy, and returns the binary.
func install(t *testing.T, proxyDir, version string) string {
	t.Helper()
	gobin := filepath.Join(t.TempDir(), "bin")
	cmd := exec.Command("go", "install", "captf.io/captf/cmd/captf-dev@"+version)
	cmd.Dir = t.TempDir()
	cmd.Env = append(goEnv(proxyDir), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	return filepath.Join(gobin, "captf-dev")
}

// goEnv reaches the proxy, before the usual one, as a user of a private
// module proxy does.
func goEnv(proxyDir string) []string {
	upstream, _ := exec.Command("go", "env", "GOPROXY").Output()
	return append(os.Environ(), "GOPROXY=file://"+proxyDir+","+strings.TrimSpace(string(upstream)),
		"GONOSUMDB=captf.io/captf", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
}

// A module author's machine: a cache of their own, in which only the tool
// cache is the one already built (so that nothing is rebuilt), and a
// module of their own in a directory of their own. Go's build cache is
// this machine's too: it holds compiled packages by their content, so it
// changes how long the builds take (captf-dev up builds the manager image,
// static, which from a cold cache takes minutes here), never what they
// make.
func authorEnv(t *testing.T, tools, proxyDir string) (env []string, workdir string) {
	t.Helper()
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cache, "captf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(tools), filepath.Join(cache, "captf", "tools")); err != nil {
		t.Fatal(err)
	}
	workdir = t.TempDir()
	if err := os.CopyFS(filepath.Join(workdir, "my-machine"), os.DirFS(filepath.Join("..", "..", "examples", "modules", "noop-machine"))); err != nil {
		t.Fatal(err)
	}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env = append(goEnv(proxyDir), "XDG_CACHE_HOME="+cache, "CAPTF_TOOLS=", "GOCACHE="+strings.TrimSpace(string(gocache)))
	return env, workdir
}

// captf-dev installed at a version runs where a module author works: it
// finds its own source in the Go module cache, its tools in the tool
// cache, builds and lints the author's module image, and brings the local
// environment up.
func TestInstalledCaptfDev(t *testing.T) {
	tools := envtest.RequireTools(t, "etcd", "kube-apiserver", "kube-controller-manager", "kubectl", "capi-manager", "tofu", "terraform", "sh")
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	version := release(t, repo)
	proxyDir := proxy(t, repo, version)
	bin := install(t, proxyDir, version)
	env, workdir := authorEnv(t, tools, proxyDir)

	build := exec.Command(bin, "images", "build", "--role=machine", "my-machine")
	build.Dir, build.Env = workdir, env
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("captf-dev images build: %v\n%s", err, out)
	}
	for _, want := range []string{"built     local/dev/my-machine:tofu@sha256:", "0 error(s), 0 warning(s)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("captf-dev images build printed no %q:\n%s", want, out)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	up := exec.CommandContext(ctx, bin, "up", "--without-manager")
	up.Dir, up.Env = workdir, env
	up.Cancel = func() error { return up.Process.Signal(syscall.SIGTERM) }
	stdout, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	up.Stderr = &stderr
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	ready := false
	for s := bufio.NewScanner(stdout); s.Scan(); {
		lines = append(lines, s.Text())
		if s.Text() == "ready" {
			ready = true
			break
		}
	}
	if ready {
		_ = up.Process.Signal(syscall.SIGTERM)
	}
	err = up.Wait()
	if !ready || err != nil {
		t.Fatalf("captf-dev up (ready %v, exit %v):\n%s\n%s", ready, err, strings.Join(lines, "\n"), stderr.String())
	}
}
