package localnode

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ocilayout "github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// refNameAnnotation names an image of an OCI layout: a tag or a whole
// reference.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// containerdNameAnnotation is where `docker save` puts an image's whole
// reference in the OCI layout of its archive.
const containerdNameAnnotation = "io.containerd.image.name"

// Imported is what ImportImage did with one image.
type Imported struct {
	StoredImage
	// Ref is the reference the store holds it under; Digest its manifest
	// digest, by which a reference <repository>@<digest> also finds it.
	Ref, Digest string
}

// ImportImage makes the image store hold an image built elsewhere: src is
// an OCI image layout directory, an OCI layout in a tar archive, or a
// `docker save` archive. The image for linux/arch is taken (from a
// multi-platform index too), its layers flattened into a root filesystem
// (whiteouts applied, symbolic links resolved inside the image's root, a
// link that can be mounted by no container dropped, devices skipped, no
// entry written outside the root) and written
// with WriteImage under ref, with the image's config labels and its
// manifest digest. An empty ref takes the reference the source names:
// the layout's org.opencontainers.image.ref.name when it is a whole
// reference (else io.containerd.image.name, as `docker save` writes it),
// or a legacy `docker save` archive's only repository tag. Such a legacy
// archive holds no manifest: its digest is the one go-containerregistry
// computes for it, not necessarily a registry's.
func ImportImage(store, src, ref, arch string) (Imported, error) {
	img, named, cleanup, err := openImage(src, arch)
	if err != nil {
		return Imported{}, fmt.Errorf("reading %s: %w", src, err)
	}
	defer cleanup()
	if ref == "" {
		ref = named
	}
	if ref == "" {
		return Imported{}, fmt.Errorf("%s names no whole image reference: give one (--ref registry.example.com/team/module:tag)", src)
	}
	imp, err := StoreImage(store, img, ref)
	if err != nil {
		return Imported{}, fmt.Errorf("%s: %w", src, err)
	}
	return imp, nil
}

// StoreImage makes the image store hold img under the tagged reference
// ref, as ImportImage does with an image it read: its layers flattened
// (UnpackImage), its labels and manifest digest kept.
func StoreImage(store string, img v1.Image, ref string) (Imported, error) {
	if _, err := name.NewTag(ref, name.WeakValidation); err != nil {
		return Imported{}, fmt.Errorf("the reference %q is not a tagged image reference: %w", ref, err)
	}
	sweepImports(store)
	root, err := os.MkdirTemp(store, importPrefix)
	if err != nil {
		return Imported{}, fmt.Errorf("creating the image store: %w", err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	fsImg, err := UnpackImage(img, root)
	if err != nil {
		return Imported{}, err
	}
	st, err := WriteImage(store, ref, fsImg)
	if err != nil {
		return Imported{}, err
	}
	return Imported{StoredImage: st, Ref: ref, Digest: fsImg.Digest}, nil
}

// importPrefix names the directories StoreImage unpacks images in.
const importPrefix = ".import-"

// staleImport is the age after which an unpacking directory is taken for
// the leftover of a killed import (an import takes seconds).
const staleImport = time.Hour

// sweepImports removes the unpacking directories killed imports left in
// store (each the size of an image).
func sweepImports(store string) {
	entries, err := os.ReadDir(store)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), importPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleImport {
			_ = os.RemoveAll(filepath.Join(store, e.Name()))
		}
	}
}

// UnpackImage flattens the layers of img into the empty directory root
// (whiteouts applied, symbolic links resolved inside the image's root, a
// link that no container could mount dropped, devices skipped, no entry
// written outside root) and returns the Image whose root filesystem that
// is, with img's config labels and manifest digest: what a node runs from
// memory (Options.Images), or WriteImage stores.
func UnpackImage(img v1.Image, root string) (Image, error) {
	digest, err := img.Digest()
	if err != nil {
		return Image{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Image{}, fmt.Errorf("reading the image's configuration: %w", err)
	}
	if err := unpack(mutate.Extract(img), root); err != nil {
		return Image{}, fmt.Errorf("unpacking the image: %w", err)
	}
	if err := pruneDangling(root); err != nil {
		return Image{}, err
	}
	fsImg, err := rootImage(root)
	if err != nil {
		return Image{}, err
	}
	if len(fsImg.Paths) == 0 {
		return Image{}, errors.New("the image holds no file")
	}
	fsImg.Labels, fsImg.Digest = cf.Config.Labels, digest.String()
	return fsImg, nil
}

// pruneDangling removes the links among the paths of the image whose root
// is root (its top-level entries and their entries) that resolve to
// nothing in it: a container could not mount them (a distribution's
// /etc/mtab, which points into /proc).
func pruneDangling(root string) error {
	top, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	var paths []string
	for _, e := range top {
		p := filepath.Join(root, e.Name())
		paths = append(paths, p)
		if e.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return err
			}
			for _, c := range entries {
				paths = append(paths, filepath.Join(p, c.Name()))
			}
		}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// openImage finds the image for linux/arch in src and the reference src
// names it by, if any.
func openImage(src, arch string) (v1.Image, string, func(), error) {
	noop := func() {}
	st, err := os.Stat(src)
	if err != nil {
		return nil, "", noop, err
	}
	if st.IsDir() {
		img, ref, err := fromLayout(src, arch)
		return img, ref, noop, err
	}
	if has, err := tarHas(src, "index.json"); err != nil || has {
		if err != nil {
			return nil, "", noop, fmt.Errorf("neither an OCI image layout nor a `docker save` archive: %w", err)
		}
		dir, err := os.MkdirTemp("", "captf-oci-")
		if err != nil {
			return nil, "", noop, err
		}
		cleanup := func() { _ = os.RemoveAll(dir) }
		f, err := os.Open(src)
		if err != nil {
			return nil, "", cleanup, err
		}
		defer func() { _ = f.Close() }()
		if err := unpack(f, dir); err != nil {
			return nil, "", cleanup, err
		}
		img, ref, err := fromLayout(dir, arch)
		return img, ref, cleanup, err
	}
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(src) })
	if err != nil {
		return nil, "", noop, fmt.Errorf("neither an OCI image layout nor a `docker save` archive: %w", err)
	}
	if len(m) != 1 {
		return nil, "", noop, fmt.Errorf("the archive holds %d images: import an archive of one", len(m))
	}
	img, err := tarball.ImageFromPath(src, nil)
	if err != nil {
		return nil, "", noop, err
	}
	var ref string
	if len(m[0].RepoTags) == 1 {
		ref = m[0].RepoTags[0]
	}
	return img, ref, noop, nil
}

// fromLayout picks the layout's image for linux/arch: its only image, or
// the matching platform of its (only) index.
func fromLayout(dir, arch string) (v1.Image, string, error) {
	idx, err := ocilayout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, "", err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	// `docker save` (Docker 25 and later) writes one entry per tag of
	// one image: the same digest.
	for _, m := range im.Manifests[1:] {
		if m.Digest != im.Manifests[0].Digest {
			return nil, "", fmt.Errorf("the layout holds %d images: import a layout of one image or one index", len(im.Manifests))
		}
	}
	if len(im.Manifests) == 0 {
		return nil, "", errors.New("the layout holds no image")
	}
	desc := im.Manifests[0]
	ref := desc.Annotations[refNameAnnotation]
	if !strings.ContainsAny(ref, "/:") {
		// A tag alone names no repository; `docker save` names the image
		// in containerd's annotation.
		ref = desc.Annotations[containerdNameAnnotation]
	}
	if !desc.MediaType.IsIndex() {
		img, err := idx.Image(desc.Digest)
		return img, ref, err
	}
	child, err := idx.ImageIndex(desc.Digest)
	if err != nil {
		return nil, "", err
	}
	cm, err := child.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	var have []string
	for _, m := range cm.Manifests {
		if m.Platform == nil {
			continue
		}
		if m.Platform.OS == "linux" && m.Platform.Architecture == arch {
			img, err := child.Image(m.Digest)
			return img, ref, err
		}
		have = append(have, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	return nil, "", fmt.Errorf("the index has no image for linux/%s (it has %s)", arch, strings.Join(have, ", "))
}

// tarHas says whether the tar archive at p has the top-level file name.
func tarHas(p, name string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("not a tar archive: %w", err)
		}
		if path.Clean(h.Name) == name {
			return true, nil
		}
	}
}
