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
)

// unpack writes the tar stream r under the directory root, as an image's
// root filesystem: directories, regular files (with their modes and
// modification times, so that a file too big for the image ID to hash
// counts the same when imported again) and links; other entries (devices,
// fifos) are skipped. Every entry is written through an os.Root, which
// refuses to leave root even through a link, and every link is made to
// resolve inside root on the host as in a container:
//   - a symbolic link's target is resolved in the image (a rooted path
//     cannot climb above /) and written relative to where the link really
//     is, after the links of its parent directories;
//   - a hard link must name a regular file of the image (a hard link to a
//     symbolic link would carry that link's relative target elsewhere).
//
// The stream's own error, which a producer (mutate.Extract) may report
// only after the end of the archive, is returned too.
func unpack(r io.Reader, root string) error {
	if rc, ok := r.(io.Closer); ok {
		defer func() { _ = rc.Close() }()
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	fsys, err := os.OpenRoot(realRoot)
	if err != nil {
		return err
	}
	defer func() { _ = fsys.Close() }()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			_, err = io.Copy(io.Discard, r)
			return err
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if name == "" {
			continue
		}
		if err := unpackEntry(fsys, realRoot, name, h, tr); err != nil {
			return fmt.Errorf("/%s: %w", name, err)
		}
	}
}

func unpackEntry(fsys *os.Root, realRoot, name string, h *tar.Header, r io.Reader) error {
	if err := fsys.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(h.Mode).Perm()
	switch h.Typeflag {
	case tar.TypeDir:
		if err := fsys.MkdirAll(name, 0o755); err != nil {
			return err
		}
		return fsys.Chmod(name, mode|0o700)
	case tar.TypeReg:
		_ = fsys.Remove(name)
		f, err := fsys.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			_ = f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := fsys.Chmod(name, mode); err != nil {
			return err
		}
		mtime := h.ModTime
		if mtime.IsZero() {
			mtime = time.Unix(0, 0) // Chtimes would leave the time of writing
		}
		return fsys.Chtimes(name, mtime, mtime)
	case tar.TypeSymlink:
		inImage := h.Linkname
		if !path.IsAbs(inImage) {
			inImage = path.Join("/", path.Dir(name), inImage)
		}
		// Where the link really is: its parent directory with the links
		// of the image resolved (each one made to stay in root).
		parent, err := filepath.EvalSymlinks(filepath.Join(realRoot, filepath.FromSlash(path.Dir(name))))
		if err != nil {
			return err
		}
		if parent != realRoot && !strings.HasPrefix(parent, realRoot+string(filepath.Separator)) {
			return fmt.Errorf("its directory resolves outside the image")
		}
		target, err := filepath.Rel(parent, filepath.Join(realRoot, filepath.FromSlash(path.Clean(inImage))))
		if err != nil {
			return err
		}
		_ = fsys.Remove(name)
		return fsys.Symlink(target, path.Join(strings.TrimPrefix(strings.TrimPrefix(parent, realRoot), string(filepath.Separator)), path.Base(name)))
	case tar.TypeLink:
		old := strings.TrimPrefix(path.Clean("/"+h.Linkname), "/")
		st, err := fsys.Lstat(old)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("a hard link to /%s, which is no regular file", old)
		}
		_ = fsys.Remove(name)
		return fsys.Link(old, name)
	}
	return nil
}
