package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// captureStdout runs f and returns what it printed.
func captureStdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = stdout }()
	done := make(chan string)
	go func() {
		data, _ := io.ReadAll(r)
		done <- string(data)
	}()
	ferr := f()
	_ = w.Close()
	return <-done, ferr
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// `captf-dev images` prints one line per image, built then unchanged.
func TestImagesCommand(t *testing.T) {
	repo, tools, store := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "store")
	writeFile(t, filepath.Join(repo, "examples", "modules", "noop", "main.tf"), "# noop\n")
	writeFile(t, filepath.Join(tools, "bin", "tofu"), "tofu")
	writeFile(t, filepath.Join(tools, "bin", "terraform"), "terraform")
	writeFile(t, filepath.Join(tools, "providers", "registry.opentofu.org", "x"), "x")
	args := []string{"--tools", tools, "--repo", repo, "images", "--out", store}
	for _, want := range []string{"built", "unchanged"} {
		out, err := captureStdout(t, func() error { return run(args) })
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("captf-dev images printed %q, want a line per image", out)
		}
		for i, ref := range []string{"local/noop:terraform", "local/noop:tofu"} {
			f := strings.Fields(lines[i])
			if len(f) != 4 || f[0] != want || f[1] != ref || !strings.HasPrefix(f[2], "sha256:") || !strings.HasPrefix(f[3], store) {
				t.Errorf("line %q, want %s %s sha256:... %s/...", lines[i], want, ref, store)
			}
		}
	}
	if err := run([]string{"--tools", tools, "--repo", repo, "images", "extra"}); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("an argument too many: %v", err)
	}
}
