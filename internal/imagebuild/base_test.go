package imagebuild_test

import (
	"archive/tar"
	"context"
	"debug/elf"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"

	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/test/envtest"
)

// The module base images as `make images` builds them: one OCI layout per
// runtime tagged with the runtime's version, the same digest when built
// twice, the runtime at /usr/local/bin with /captf/runtime linking to it,
// a static shell, user 65532 (captf, no login shell), the runtime's
// labels, nothing at the paths a module image adds; and the shell runs a
// module's local-exec provisioner through the image's own runtime.
func TestModuleBaseImages(t *testing.T) {
	t.Parallel()
	tools := envtest.RequireTools(t, "tofu", "terraform", "sh")
	ctx := context.Background()
	meta := imagebuild.Meta{Version: "v0.0.0-test", Revision: "0123abc", Source: "https://example.com/captf"}
	out := []string{t.TempDir(), t.TempDir()}
	first, err := imagebuild.BuildBases(ctx, tools, out[0], runtime.GOARCH, meta)
	if err != nil {
		t.Fatal(err)
	}
	again, err := imagebuild.BuildBases(ctx, tools, out[1], runtime.GOARCH, meta)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(first, again) {
		t.Errorf("two builds have the digests %v and %v", first, again)
	}
	for name, rt := range imagebuild.BaseRuntimes {
		t.Run(name, func(t *testing.T) {
			version, err := imagebuild.RuntimeVersion(ctx, filepath.Join(tools, "bin", rt))
			if err != nil {
				t.Fatal(err)
			}
			idx, err := layout.ImageIndexFromPath(filepath.Join(out[0], name))
			if err != nil {
				t.Fatal(err)
			}
			im, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			if len(im.Manifests) != 1 || im.Manifests[0].Digest != first[name] || im.Manifests[0].Annotations[imagebuild.RefNameAnnotation] != version {
				t.Fatalf("the layout's index %+v: want one image %s tagged %s", im.Manifests, first[name], version)
			}
			img, err := idx.Image(first[name])
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			wantLabels := map[string]string{"io.captf.contract": "v1alpha1", "io.captf.runtime": rt, "io.captf.runtime.version": version,
				"org.opencontainers.image.version": meta.Version, "org.opencontainers.image.revision": meta.Revision,
				"org.opencontainers.image.source": meta.Source}
			if cf.Config.User != "65532:65532" || cf.Config.WorkingDir != "/captf" ||
				!slices.Equal(cf.Config.Entrypoint, []string{"/captf/runtime"}) || !maps.Equal(cf.Config.Labels, wantLabels) {
				t.Errorf("config: user %q, workdir %q, entrypoint %q, labels %v; want 65532:65532, /captf, [/captf/runtime], %v",
					cf.Config.User, cf.Config.WorkingDir, cf.Config.Entrypoint, cf.Config.Labels, wantLabels)
			}
			files := extract(t, img)
			bin := "usr/local/bin/" + rt
			if h := files[bin]; h == nil || h.Typeflag != tar.TypeReg || h.FileInfo().Mode().Perm() != 0o755 {
				t.Errorf("/%s is %+v, want an executable file", bin, h)
			}
			if h := files["captf/runtime"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "/"+bin {
				t.Errorf("/captf/runtime is %+v, want a link to /%s", h, bin)
			}
			if h := files["tmp"]; h == nil || h.Typeflag != tar.TypeDir || h.Mode&0o1777 != 0o1777 {
				t.Errorf("/tmp is %+v, want a sticky directory everyone writes", h)
			}
			for _, reserved := range []string{"captf/module", "captf/providers", "captf/work", "captf/bin", "captf/config", "captf/plan-key", "var/run/captf"} {
				if _, ok := files[reserved]; ok {
					t.Errorf("the base holds /%s, a path a module image adds or a Job mounts", reserved)
				}
			}
			root := t.TempDir()
			for _, p := range []string{bin, "bin/sh", "etc/passwd"} {
				writeFile(t, img, p, filepath.Join(root, filepath.Base(p)))
			}
			if passwd, _ := os.ReadFile(filepath.Join(root, "passwd")); !strings.Contains(string(passwd), "captf:x:65532:65532:captf:/tmp:/usr/sbin/nologin") {
				t.Errorf("/etc/passwd has no captf user of 65532 without a login shell:\n%s", passwd)
			}
			checkStatic(t, filepath.Join(root, "sh"))
			localExec(t, filepath.Join(root, rt), filepath.Join(root, "sh"))
		})
	}
}

// checkStatic fails the test when the binary at p asks for a dynamic
// loader, which an image without a distribution does not have.
func checkStatic(t *testing.T, p string) {
	t.Helper()
	f, err := elf.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a dynamic loader", filepath.Base(p))
		}
	}
}

// localExec applies a module whose local-exec provisioner runs through
// the image's shell (the interpreter a module image gets at /bin/sh) with
// the image's runtime, and checks what the command wrote.
func localExec(t *testing.T, runtimeBin, shell string) {
	t.Helper()
	dir := t.TempDir()
	module := `resource "terraform_data" "hello" {
  provisioner "local-exec" {
    command     = "mkdir -p out && echo \"$GREETING from $(cat name.txt)\" > out/said && ls out"
    interpreter = ["` + shell + `", "-c"]
    environment = { GREETING = "hello" }
  }
}
`
	for name, data := range map[string]string{"main.tf": module, "name.txt": "the base image\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-input=false"}, {"apply", "-auto-approve", "-input=false"}} {
		cmd := exec.Command(runtimeBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(runtimeBin), args[0], err, out)
		}
	}
	said, err := os.ReadFile(filepath.Join(dir, "out", "said"))
	if err != nil || string(said) != "hello from the base image\n" {
		t.Errorf("the local-exec command wrote %q (%v), want %q", said, err, "hello from the base image\n")
	}
}
