package imagebuild_test

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/test/envtest"
)

// The manager image as `make images` builds it: an OCI layout tagged with
// the version, the manager and the static runner at their paths, user
// 65532, the OCI labels, no shell; built twice from the same checkout it
// has the same digest; the manager in it prints the version it was
// stamped with.
func TestManagerImage(t *testing.T) {
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	meta := imagebuild.Meta{Version: "v0.0.0-test", Revision: "0123abc", Source: "https://example.com/captf"}
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	digest, err := imagebuild.BuildManager(context.Background(), root, dirs[0], runtime.GOARCH, meta)
	if err != nil {
		t.Fatal(err)
	}
	again, err := imagebuild.BuildManager(context.Background(), root, dirs[1], runtime.GOARCH, meta)
	if err != nil {
		t.Fatal(err)
	}
	if again != digest {
		t.Errorf("two builds of one checkout have the digests %s and %s", digest, again)
	}

	idx, err := layout.ImageIndexFromPath(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != digest || im.Manifests[0].Annotations[imagebuild.RefNameAnnotation] != meta.Version {
		t.Fatalf("the layout's index %+v: want one image %s tagged %s", im.Manifests, digest, meta.Version)
	}
	img, err := idx.Image(digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("media types %s (config %s), want OCI's", m.MediaType, m.Config.MediaType)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"org.opencontainers.image.version": meta.Version,
		"org.opencontainers.image.revision": meta.Revision, "org.opencontainers.image.source": meta.Source}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || cf.Config.User != "65532:65532" ||
		!slices.Equal(cf.Config.Entrypoint, []string{"/manager"}) || !maps.Equal(cf.Config.Labels, wantLabels) {
		t.Errorf("config: %s/%s, user %q, entrypoint %q, labels %v; want linux/%s, 65532:65532, [/manager], %v",
			cf.OS, cf.Architecture, cf.Config.User, cf.Config.Entrypoint, cf.Config.Labels, runtime.GOARCH, wantLabels)
	}

	files := extract(t, img)
	for _, p := range []string{"manager", "runner"} {
		h, ok := files[p]
		if !ok || h.Typeflag != tar.TypeReg || h.FileInfo().Mode().Perm() != 0o755 {
			t.Errorf("/%s: %+v, want an executable file", p, h)
		}
	}
	for p, h := range files {
		if strings.HasPrefix(p, "bin/") || strings.HasSuffix(p, "/sh") || !h.ModTime.Equal(files["manager"].ModTime) {
			t.Errorf("/%s (time %s): the image holds a shell or an entry of another time", p, h.ModTime)
		}
	}
	if h := files[strings.TrimPrefix(imagebuild.CABundlePath, "/")]; h == nil || h.Size == 0 {
		t.Errorf("the image holds no CA bundle at %s: the manager could not verify registries", imagebuild.CABundlePath)
	}
	if h := files["tmp"]; h == nil || h.Typeflag != tar.TypeDir || h.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp is %+v, want a sticky directory everyone writes", h)
	}
	if h := files["home/nonroot"]; h == nil || h.Typeflag != tar.TypeDir || h.Uid != 65532 {
		t.Errorf("/home/nonroot is %+v, want a directory of 65532", h)
	}

	bin := t.TempDir()
	for _, p := range []string{"manager", "runner"} {
		writeFile(t, img, p, filepath.Join(bin, p))
	}
	checkStatic(t, filepath.Join(bin, "runner"))
	if runtime.GOOS == "linux" {
		out, err := exec.Command(filepath.Join(bin, "manager"), "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), meta.Version) {
			t.Errorf("the image's manager --version: %v\n%s; want %s", err, out, meta.Version)
		}
	}
}

// walk calls fn with each entry of the image's filesystem.
func walk(t *testing.T, img v1.Image, fn func(h *tar.Header, r io.Reader)) {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(h, tr)
	}
}

// extract lists the image's filesystem entries by path.
func extract(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	out := map[string]*tar.Header{}
	walk(t, img, func(h *tar.Header, _ io.Reader) { out[strings.TrimSuffix(h.Name, "/")] = h })
	return out
}

// writeFile copies the image's file at name to dest, executable.
func writeFile(t *testing.T, img v1.Image, name, dest string) {
	t.Helper()
	found := false
	walk(t, img, func(h *tar.Header, r io.Reader) {
		if h.Name != name {
			return
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dest, data, fs.FileMode(0o755)); err != nil {
			t.Fatal(err)
		}
		found = true
	})
	if !found {
		t.Fatalf("the image has no %s", name)
	}
}
