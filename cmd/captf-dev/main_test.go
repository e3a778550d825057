package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"captf.io/captf/internal/imagebuild"
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

// `captf-dev images` prints one line per image, built then unchanged,
// with its digest.
func TestImagesCommand(t *testing.T) {
	repo, tools, store := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "store")
	writeFile(t, filepath.Join(repo, "examples", "modules", "noop-machine", "main.tf"), "# noop\n")
	for _, rt := range []string{"tofu", "terraform"} {
		writeFile(t, filepath.Join(tools, "bin", rt), "#!/bin/sh\necho '{\"terraform_version\":\"1.0.0\"}'\n")
	}
	writeFile(t, filepath.Join(tools, "bin", "sh"), "shell")
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
		for i, ref := range []string{"local/noop-machine:terraform", "local/noop-machine:tofu"} {
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

// `captf-dev images import` puts an OCI layout in the image store under
// the reference it names, printing it with its digest: imported, then
// unchanged; without a reference to use it says how to give one.
func TestImagesImportCommand(t *testing.T) {
	src, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	img, err := imagebuild.Build(imagebuild.Spec{Files: []imagebuild.File{{Path: "/captf/module/main.tf", Mode: 0o644, Data: []byte("# noop\n")}},
		OS: "linux", Arch: runtime.GOARCH})
	if err != nil {
		t.Fatal(err)
	}
	const ref = "registry.example.com/team/noop:v1"
	digest, err := imagebuild.WriteLayout(filepath.Join(src, "named"), ref, img)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"imported", "unchanged"} {
		out, err := captureStdout(t, func() error { return run([]string{"images", "import", "--out", store, filepath.Join(src, "named")}) })
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(out)
		if len(f) != 3 || f[0] != want || f[1] != ref+"@"+digest.String() || f[2] != filepath.Join(store, "registry.example.com", "team", "noop", "v1") {
			t.Errorf("captf-dev images import printed %q, want %s %s@%s <store dir>", out, want, ref, digest)
		}
	}
	if _, err := imagebuild.WriteLayout(filepath.Join(src, "tag"), "v1", img); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"images", "import", "--out", store, filepath.Join(src, "tag")}); err == nil || !strings.Contains(err.Error(), "--ref") {
		t.Errorf("importing a layout that names only a tag: %v, want an error saying to give --ref", err)
	}
	if err := run([]string{"images", "import", "--out", store}); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no source: %v, want the usage", err)
	}
}
