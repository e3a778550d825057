package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one entry of an image: a regular file (Data, or the contents of
// the host file Source), a directory when Dir is set, or a symbolic link
// to Link.
type File struct {
	Path     string
	Mode     fs.FileMode
	Data     []byte
	Source   string
	Dir      bool
	Link     string
	UID, GID int
}

// Spec is an image: its files and its configuration.
type Spec struct {
	Files      []File
	User       string
	Entrypoint []string
	Env        []string
	WorkingDir string
	Labels     map[string]string
	OS, Arch   string
}

// epoch is every time the image records: the files' and the config's.
var epoch = time.Unix(0, 0).UTC()

// RefNameAnnotation names an image of a layout by its tag.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// Build makes the image of spec: one layer holding its files (with their
// parent directories), OCI media types, and a configuration whose times
// are the epoch, so that the same spec always has the same digest.
func Build(spec Spec) (v1.Image, error) {
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := appendFiles(base, spec.Files, "the image's files")
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created, cf.OS, cf.Architecture = v1.Time{Time: epoch}, spec.OS, spec.Arch
	cf.Config.User, cf.Config.Entrypoint, cf.Config.Env = spec.User, spec.Entrypoint, spec.Env
	cf.Config.WorkingDir, cf.Config.Labels = spec.WorkingDir, spec.Labels
	return mutate.ConfigFile(img, cf)
}

// appendFiles adds a layer holding files (and their parent directories)
// on top of img.
func appendFiles(img v1.Image, files []File, comment string) (v1.Image, error) {
	data, err := layerTar(files)
	if err != nil {
		return nil, err
	}
	// The layer is compressed once: for its digest, here, and the same
	// bytes are kept for the layout's blob (without the cache, writing
	// it compressed it again: half an image build's CPU).
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestSpeed), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "captf imagebuild", Comment: comment},
	})
}

// layerTar writes the files, and every parent directory not listed, as a
// tar sorted by path with fixed times and owners.
func layerTar(files []File) ([]byte, error) {
	byPath := map[string]File{}
	for _, f := range files {
		p := path.Clean("/" + f.Path)
		if p == "/" {
			return nil, fmt.Errorf("the image root is no file")
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("%s is listed twice", p)
		}
		f.Path = p
		byPath[p] = f
	}
	for p := range byPath {
		for dir := path.Dir(p); dir != "/"; dir = path.Dir(dir) {
			if _, ok := byPath[dir]; !ok {
				byPath[dir] = File{Path: dir, Dir: true, Mode: 0o755}
			}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		f := byPath[p]
		if parent, ok := byPath[path.Dir(p)]; ok && !parent.Dir {
			return nil, fmt.Errorf("%s is under %s, a file", p, parent.Path)
		}
		hdr := &tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: int64(f.Mode.Perm()),
			Uid: f.UID, Gid: f.GID, ModTime: epoch, Format: tar.FormatPAX}
		if f.Mode&fs.ModeSticky != 0 {
			hdr.Mode |= 0o1000
		}
		var data []byte
		switch {
		case f.Dir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case f.Link != "":
			hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, f.Link, 0o777
		default:
			data = f.Data
			if f.Source != "" {
				var err error
				if data, err = os.ReadFile(f.Source); err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
			}
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteLayout writes img as the only image of a new OCI image layout at
// dir (whatever dir held is replaced), tagged tag, and returns its digest.
func WriteLayout(dir, tag string, img v1.Image) (v1.Hash, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{RefNameAnnotation: tag})); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// Tree lists the files of the host tree src as the entries of the image
// directory dest: directories, regular files with their modes, and
// symbolic links as they are.
func Tree(src, dest string) ([]File, error) {
	return walkTree(src, dest, false, nil)
}

// walkTree lists the host tree src as the entries of the image directory
// dest (links followed when follow is set), leaving out the entries skip
// names and what is below them.
func walkTree(src, dest string, follow bool, skip func(name string, dir bool) bool) ([]File, error) {
	var files []File
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != src && skip != nil && skip(d.Name(), d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		f, err := entry(p, path.Join(dest, filepath.ToSlash(rel)), follow)
		if err != nil {
			return err
		}
		if follow && f.Dir && d.Type()&fs.ModeSymlink != 0 && p != src {
			// WalkDir does not enter a link to a directory: list what it
			// leads to in its place.
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return err
			}
			below, err := walkTree(real, f.Path, follow, skip)
			files = append(files, below...)
			return err
		}
		files = append(files, f)
		return nil
	})
	return files, err
}

// entry is the image entry of the host path p at dest: a directory, a
// regular file with its mode, or a link as it is (or, when follow is set,
// what it leads to).
func entry(p, dest string, follow bool) (File, error) {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	info, err := stat(p)
	if err != nil {
		return File{}, err
	}
	f := File{Path: dest, Mode: info.Mode().Perm()}
	switch {
	case info.IsDir():
		f.Dir = true
	case info.Mode()&fs.ModeSymlink != 0:
		if f.Link, err = os.Readlink(p); err != nil {
			return File{}, err
		}
	case info.Mode().IsRegular():
		f.Source = p
	default:
		return File{}, fmt.Errorf("%s is neither a file, a directory nor a link", p)
	}
	return f, nil
}
