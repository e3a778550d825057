package imagecheck

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// entry is one tar entry of a test layer: a regular file (data), a
// directory, a symbolic link (link), a hard link (hard) or a whiteout
// (its path's base starts with .wh.).
type entry struct {
	path     string
	mode     int64
	data     string
	dir      bool
	link     string
	hard     string
	uid, gid int
}

// file and dir are owned by 65532, as COPY --chown=65532:65532 makes
// them.
func file(p, data string, mode int64) entry {
	return entry{path: p, data: data, mode: mode, uid: 65532, gid: 65532}
}

func dir(p string, mode int64) entry {
	return entry{path: p, dir: true, mode: mode, uid: 65532, gid: 65532}
}

func symlink(p, to string) entry { return entry{path: p, link: to, mode: 0o777} }

func whiteout(p string) entry { return entry{path: p} }

// spec is a test image: its layers (the first at the bottom) and config.
type spec struct {
	base       map[string]entry
	upper      [][]entry
	user       string
	labels     map[string]string
	entrypoint []string
	os, arch   string
}

const (
	moduleMain = "terraform {\n  required_version = \">= 1.6\"\n}\n"
	nullZip    = "/captf/providers/registry.opentofu.org/hashicorp/null/terraform-provider-null_3.2.4_linux_amd64.zip"
)

// clean is an image that keeps the contract: a module, the runtime
// linked from /captf/runtime, a mirror with hashicorp/null for
// linux/amd64, every label, and the numeric non-root user 65532.
func clean() spec {
	files := []entry{
		{path: "/etc/passwd", mode: 0o644, data: "root:x:0:0:root:/root:/usr/sbin/nologin\ncaptf:x:65532:65532:captf:/tmp:/usr/sbin/nologin\n"},
		{path: "/etc/group", mode: 0o644, data: "root:x:0:\ncaptf:x:65532:\n"},
		{path: "/usr/local/bin/tofu", mode: 0o755, data: "#!tofu"},
		symlink("/captf/runtime", "/usr/local/bin/tofu"),
		{path: "/captf", dir: true, mode: 0o755},
		{path: "/tmp", dir: true, mode: 0o1777},
		dir("/captf/module", 0o755),
		file("/captf/module/main.tf", moduleMain, 0o644),
		dir("/captf/module/modules", 0o755),
		file("/captf/module/modules/net/main.tf", "# submodule\n", 0o644),
		dir("/captf/providers", 0o755),
		file(nullZip, "PK", 0o644),
		file("/captf/providers/registry.opentofu.org/hashicorp/null/index.json", `{"versions":{"3.2.4":{}}}`, 0o644),
		file("/captf/providers/registry.opentofu.org/hashicorp/null/3.2.4.json",
			`{"archives":{"linux_amd64":{"url":"terraform-provider-null_3.2.4_linux_amd64.zip","hashes":["h1:x"]}}}`, 0o644),
	}
	s := spec{base: map[string]entry{}, user: "65532:65532", os: "linux", arch: "amd64", labels: map[string]string{
		labelRole: "machine", labelContract: "v1alpha1", labelRuntime: "tofu", "io.captf.runtime.version": "1.12.7",
		labelCapacity: `{"cpu":"2","memory":"4Gi"}`, labelNodeInfo: `{"architecture":"amd64","operatingSystem":"linux"}`,
	}}
	for _, e := range files {
		s.base[e.path] = e
	}
	return s
}

// layer is a tar layer of entries, in their order.
func layer(t testing.TB, entries []entry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: strings.TrimPrefix(e.path, "/"), Mode: e.mode, Uid: e.uid, Gid: e.gid, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		switch {
		case e.dir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case e.link != "":
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.link
		case e.hard != "":
			hdr.Typeflag, hdr.Linkname = tar.TypeLink, strings.TrimPrefix(e.hard, "/")
		}
		if hdr.Typeflag != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Size > 0 {
			if _, err := io.WriteString(tw, e.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// image builds s.
func (s spec) image(t testing.TB) v1.Image {
	t.Helper()
	base := slices.Collect(maps.Values(s.base))
	slices.SortFunc(base, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	layers := []v1.Layer{layer(t, base)}
	for _, u := range s.upper {
		layers = append(layers, layer(t, u))
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = s.os, s.arch
	cf.Config.User, cf.Config.Labels, cf.Config.Entrypoint = s.user, s.labels, s.entrypoint
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// writeLayout writes images as an OCI image layout, with their platforms
// in the index when withPlatforms, and returns its oci: reference.
func writeLayout(t testing.TB, withPlatforms bool, images ...v1.Image) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "layout")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range images {
		var opts []layout.Option
		if withPlatforms {
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			opts = append(opts, layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture}))
		}
		if err := p.AppendImage(img, opts...); err != nil {
			t.Fatal(err)
		}
	}
	return layoutPrefix + dir
}

// writeIndexLayout writes images as one image index, the only entry of
// an OCI image layout (as builders write a multi-platform image), and
// returns its oci: reference.
func writeIndexLayout(t testing.TB, images ...v1.Image) string {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, img := range images {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: cf.OS, Architecture: cf.Architecture}}})
	}
	dir := filepath.Join(t.TempDir(), "layout")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendIndex(idx); err != nil {
		t.Fatal(err)
	}
	return layoutPrefix + dir
}

// seen is what a stub ModuleCheck saw of the extracted module: its files
// by path relative to the module, with their contents ("-> target" for a
// link).
type seen map[string]string

// stub is a ModuleCheck returning facts, recording what it saw.
func stub(facts ModuleFacts, saw seen) func(string) (ModuleFacts, error) {
	return func(dir string) (ModuleFacts, error) {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if d.Type()&fs.ModeSymlink != 0 {
				to, err := os.Readlink(p)
				saw[filepath.ToSlash(rel)] = "-> " + to
				return err
			}
			data, err := os.ReadFile(p)
			saw[filepath.ToSlash(rel)] = string(data)
			return err
		})
		return facts, err
	}
}

// check lints s as a machine module, with the stub module checks.
func check(t testing.TB, s spec, facts ModuleFacts, mod ...func(*Options)) ([]lint.Finding, *Description, seen) {
	t.Helper()
	saw := seen{}
	opts := Options{Role: contract.RoleMachine, Contract: contract.Version, Ref: writeLayout(t, false, s.image(t)), ModuleCheck: stub(facts, saw)}
	for _, m := range mod {
		m(&opts)
	}
	findings, desc, err := Check(t.Context(), opts)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return findings, desc.(*Description), saw
}

// find is the finding of id about file, if any.
func find(findings []lint.Finding, id, file string) (lint.Finding, bool) {
	for _, f := range findings {
		if f.ID == id && f.File == file {
			return f, true
		}
	}
	return lint.Finding{}, false
}

// serious are the error and warning findings.
func serious(findings []lint.Finding) []lint.Finding {
	var out []lint.Finding
	for _, f := range findings {
		if f.Severity != lint.Info {
			out = append(out, f)
		}
	}
	return out
}

// providers are the stub module's providers: hashicorp/null, as the
// clean image's mirror holds.
var nullProvider = ModuleFacts{Providers: []string{"hashicorp/null"}, Variables: []string{"captf_contract", "machine_name"}}
