package localnode

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	ocilayout "github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// entry is one tar entry of a test layer.
type entry struct {
	name, data, link string
	typ              byte
	mode             int64
}

// tarBytes is a tar archive of the entries.
func tarBytes(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Size: int64(len(e.data))}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil && h.Size > 0 {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func layer(t *testing.T, entries ...entry) v1.Layer {
	t.Helper()
	data := tarBytes(t, entries...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// moduleImage is a module image of two layers: the second removes a file
// of the first (a whiteout) and replaces another; /captf/runtime is an
// absolute link into the image, as the base images lay it out.
func moduleImage(t *testing.T, arch, greeting string) v1.Image {
	t.Helper()
	base := layer(t,
		entry{name: "usr/local/bin/tofu", data: "#!runtime " + arch, mode: 0o755},
		entry{name: "captf/runtime", typ: tar.TypeSymlink, link: "/usr/local/bin/tofu"},
		entry{name: "captf/module/old.tf", data: "# removed by the next layer"},
		entry{name: "captf/module/main.tf", data: "# first"},
	)
	top := layer(t,
		entry{name: "captf/module/.wh.old.tf"},
		entry{name: "captf/module/main.tf", data: greeting},
		entry{name: "captf/providers/registry.opentofu.org/hashicorp/null/1.0.0/linux_amd64/terraform-provider-null", data: "#!provider", mode: 0o755},
		// Bigger than the image ID hashes: it counts by size and mtime.
		entry{name: "captf/providers/registry.opentofu.org/hashicorp/random/2.0.0/linux_amd64/terraform-provider-random",
			data: "#!provider" + strings.Repeat("\x00", hashedContentBytes), mode: 0o755},
	)
	img, err := mutate.AppendLayers(empty.Image, base, top)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Config.Labels = map[string]string{"io.captf.role": "machine", "io.captf.runtime": "tofu"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func writeLayout(t *testing.T, dir string, add func(ocilayout.Path) error) {
	t.Helper()
	p, err := ocilayout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := add(p); err != nil {
		t.Fatal(err)
	}
}

// tarDir writes the tree at dir as a tar archive at dest.
func tarDir(t *testing.T, dir, dest string) {
	t.Helper()
	f, err := os.Create(dest)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// An image built elsewhere, as an OCI layout, an OCI archive, a `docker
// save` archive or a multi-platform index, is held by the store under its
// reference: the layers flattened, the links resolved inside the image,
// its labels served, and the node finds it by reference, by digest, and
// by both, reporting the manifest digest as its ID.
func TestImportImage(t *testing.T) {
	const ref = "registry.example.com/team/noop-machine:v1"
	img := moduleImage(t, "amd64", "# hello")
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	arm := moduleImage(t, "arm64", "# hello")
	src := t.TempDir()
	named := map[string]string{"org.opencontainers.image.ref.name": ref}
	writeLayout(t, filepath.Join(src, "layout"), func(p ocilayout.Path) error {
		return p.AppendImage(img, ocilayout.WithAnnotations(named))
	})
	tarDir(t, filepath.Join(src, "layout"), filepath.Join(src, "layout.tar"))
	writeLayout(t, filepath.Join(src, "tag-only"), func(p ocilayout.Path) error {
		return p.AppendImage(img, ocilayout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "v1"}))
	})
	multi := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})
	writeLayout(t, filepath.Join(src, "multi"), func(p ocilayout.Path) error {
		return p.AppendIndex(multi, ocilayout.WithAnnotations(named))
	})
	// Docker 25 and later save an OCI layout: one entry per tag, the
	// whole reference in containerd's annotation.
	writeLayout(t, filepath.Join(src, "docker-oci"), func(p ocilayout.Path) error {
		if err := p.AppendImage(img, ocilayout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": "v1", "io.containerd.image.name": ref})); err != nil {
			return err
		}
		return p.AppendImage(img, ocilayout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": "latest", "io.containerd.image.name": "registry.example.com/team/noop-machine:latest"}))
	})
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := tarball.WriteToFile(filepath.Join(src, "docker.tar"), tag, img); err != nil {
		t.Fatal(err)
	}

	testCases := []struct {
		name, src, ref string
	}{
		{name: "an OCI layout naming its reference", src: "layout"},
		{name: "an OCI layout as a tar archive", src: "layout.tar"},
		{name: "a docker save archive", src: "docker.tar"},
		{name: "a docker save archive of Docker 25", src: "docker-oci"},
		{name: "a multi-platform index", src: "multi"},
		{name: "a layout naming only a tag, given a reference", src: "tag-only", ref: ref},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			store := t.TempDir()
			got, err := ImportImage(store, filepath.Join(src, tc.src), tc.ref, "amd64")
			if err != nil {
				t.Fatal(err)
			}
			wantID := "registry.example.com/team/noop-machine@" + digest.String()
			if got.Ref != ref || got.Digest != digest.String() || got.ID != wantID || !got.Changed {
				t.Errorf("imported %+v, want %s at %s (ID %s), changed", got, ref, digest, wantID)
			}
			root := filepath.Join(store, "registry.example.com", "team", "noop-machine", "v1")
			for p, want := range map[string]string{"captf/module/main.tf": "# hello", "captf/runtime": "#!runtime amd64",
				"captf/providers/registry.opentofu.org/hashicorp/null/1.0.0/linux_amd64/terraform-provider-null": "#!provider"} {
				if data, err := os.ReadFile(filepath.Join(root, p)); err != nil || string(data) != want {
					t.Errorf("/%s holds %q (%v), want %q", p, data, err, want)
				}
			}
			if _, err := os.Lstat(filepath.Join(root, "captf", "module", "old.tf")); !os.IsNotExist(err) {
				t.Errorf("/captf/module/old.tf, which the second layer removes, is there (%v)", err)
			}
			set := imageSet{store: store}
			for _, r := range []string{ref, "registry.example.com/team/noop-machine@" + digest.String(), ref + "@" + digest.String()} {
				pulled, err := set.pull(r)
				if err != nil || pulled.id != wantID {
					t.Errorf("pull(%s) = %s, %v; want the image %s", r, pulled.id, err, wantID)
				}
			}
			if labels, err := ImageLabels(store, ref); err != nil || labels["io.captf.role"] != "machine" {
				t.Errorf("the labels served are %v (%v), want the image's", labels, err)
			}
			again, err := ImportImage(store, filepath.Join(src, tc.src), tc.ref, "amd64")
			if err != nil || again.Changed || again.ID != wantID {
				t.Errorf("importing it again: %+v, %v; want it unchanged", again, err)
			}
		})
	}

	// A rebuild of the tag with other content is no longer that digest.
	store := t.TempDir()
	if _, err := ImportImage(store, filepath.Join(src, "layout"), "", "amd64"); err != nil {
		t.Fatal(err)
	}
	s := newSource(t)
	rebuilt, err := WriteImage(store, ref, s.image())
	if err != nil {
		t.Fatal(err)
	}
	set := imageSet{store: store}
	if strings.HasSuffix(rebuilt.ID, digest.String()) {
		t.Errorf("the rebuilt tag still reports %s", rebuilt.ID)
	}
	if _, err := set.pull("registry.example.com/team/noop-machine@" + digest.String()); err == nil {
		t.Errorf("the rebuilt tag is still found by the imported digest")
	}
}

// What cannot be imported is refused with what to do, and nothing is
// written outside the store.
func TestImportImageRefusals(t *testing.T) {
	src := t.TempDir()
	img := moduleImage(t, "amd64", "# hello")
	writeLayout(t, filepath.Join(src, "tag-only"), func(p ocilayout.Path) error {
		return p.AppendImage(img, ocilayout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "v1"}))
	})
	writeLayout(t, filepath.Join(src, "two"), func(p ocilayout.Path) error {
		if err := p.AppendImage(img); err != nil {
			return err
		}
		return p.AppendImage(moduleImage(t, "amd64", "# other"))
	})
	if err := os.WriteFile(filepath.Join(src, "junk.tar"), []byte("not an archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	testCases := []struct {
		name, src, ref, arch, want string
	}{
		{name: "no reference", src: "tag-only", arch: "amd64", want: "give one (--ref"},
		{name: "a bad reference", src: "tag-only", ref: "Not A Ref", arch: "amd64", want: "not a tagged image reference"},
		{name: "two images", src: "two", ref: "x/y:z", arch: "amd64", want: "holds 2 images"},
		{name: "not an image", src: "junk.tar", ref: "x/y:z", arch: "amd64", want: "neither an OCI image layout nor"},
		{name: "missing", src: "nothing", ref: "x/y:z", arch: "amd64", want: "no such file"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ImportImage(t.TempDir(), filepath.Join(src, tc.src), tc.ref, tc.arch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ImportImage: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// A hostile image's entries cannot write outside the image's root, nor
// bring a host file into it: a layer whose paths climb out is refused
// whole; in an archive unpacked as it is (an OCI archive), links pointing
// out, through other links or from a hard link resolve inside the image
// or are refused.
func TestImportImageStaysInItsRoot(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	nothingOutside := func(t *testing.T) {
		t.Helper()
		if left, err := os.ReadDir(outside); err != nil || len(left) != 1 {
			t.Errorf("the import wrote %v outside the store (%v)", left, err)
		}
	}
	climbing := layer(t, entry{name: "../../../../" + strings.TrimPrefix(outside, "/") + "/climbed", data: "x"})
	img, err := mutate.AppendLayers(empty.Image, climbing, layer(t, entry{name: "captf/module/main.tf", data: "# ok"}))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "evil")
	writeLayout(t, src, func(p ocilayout.Path) error { return p.AppendImage(img) })
	if _, err := ImportImage(t.TempDir(), src, "evil/module:v1", "amd64"); err == nil || !strings.Contains(err.Error(), "unsafe") {
		t.Errorf("importing a layer whose path climbs out: %v, want a refusal", err)
	}
	nothingOutside(t)

	climb := strings.Repeat("../", 12) + strings.TrimPrefix(outside, "/")
	testCases := []struct {
		name    string
		entries []entry
		refused string
		inside  []string // files that must be written inside the root
	}{
		{name: "a link climbing out", entries: []entry{
			{name: strings.TrimPrefix(outside, "/"), typ: tar.TypeDir, mode: 0o755},
			{name: "escape", typ: tar.TypeSymlink, link: climb},
			{name: "escape/through-link", data: "x"},
			{name: "abs", typ: tar.TypeSymlink, link: outside},
			{name: "abs/through-abs-link", data: "x"},
		}, inside: []string{"escape/through-link", "abs/through-abs-link", strings.TrimPrefix(outside, "/") + "/through-link"}},
		{name: "a link to nothing", entries: []entry{
			{name: "dangling", typ: tar.TypeSymlink, link: climb + "/nothing"},
			{name: "dangling/through", data: "x"},
		}, refused: "file exists"},
		{name: "links through links", entries: []entry{
			{name: "x/y", typ: tar.TypeSymlink, link: "/"},
			{name: "x/y/z/w", typ: tar.TypeSymlink, link: "/"},
			{name: "x/y/z/w/through-two-links", data: "x"},
		}, inside: []string{"through-two-links", "x/y/z/w/through-two-links"}},
		{name: "a hard link to a link", entries: []entry{
			{name: "a/b/c/l", typ: tar.TypeSymlink, link: "/"},
			{name: "h", typ: tar.TypeLink, link: "a/b/c/l"},
		}, refused: "no regular file"},
		{name: "a hard link to a host file", entries: []entry{
			{name: "a/b/c/d/e/f/l", typ: tar.TypeSymlink, link: "/"},
			{name: "etc/k", typ: tar.TypeLink, link: "a/b/c/d/e/f/l/" + climb + "/secret"},
		}, refused: "no such file"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			err := unpack(bytes.NewReader(tarBytes(t, tc.entries...)), root)
			switch {
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Errorf("unpack: %v, want a refusal saying %q", err, tc.refused)
			case tc.refused == "" && err != nil:
				t.Errorf("unpack: %v", err)
			}
			for _, p := range tc.inside {
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("/%s is not inside the image: %v", p, err)
				}
			}
			nothingOutside(t)
		})
	}
}

// StoreImage removes what a killed import left (an unpacking directory
// older than an hour), and leaves an import that may still run.
func TestStoreImageSweepsKilledImports(t *testing.T) {
	store := t.TempDir()
	old, recent := filepath.Join(store, importPrefix+"killed"), filepath.Join(store, importPrefix+"running")
	for _, d := range []string{old, recent} {
		if err := os.MkdirAll(filepath.Join(d, "captf"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * staleImport)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if _, err := StoreImage(store, moduleImage(t, "amd64", "hello"), "registry.example.com/team/noop:v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the killed import's directory is left: %v", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a recent import's directory was removed: %v", err)
	}
}
