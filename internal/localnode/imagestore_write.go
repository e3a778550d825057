package localnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"captf.io/captf/internal/filelock"
)

// StoredImage is what WriteImage did with one image.
type StoredImage struct {
	// Dir is the image's directory in the store.
	Dir string
	// ID is the image ID a container of it reports.
	ID string
	// Changed is false when the store already held the same content.
	Changed bool
}

// WriteImage makes the image store hold img under the tagged reference ref,
// unless its directory already holds the same content (the image ID, which
// counts each file's content or, for a big one, its size and mtime, is
// the same). Each path of img must be a top-level entry or the entry of a
// top-level directory (/runner, /captf/module), as rootImage reads them
// back.
//
// A new image is laid out in a fresh directory of the repository: small
// files copied, files bigger than the ID hashes (runtime and provider
// binaries) hard-linked, or copied with their mtime where a link cannot
// be made; symbolic links are kept. The tag is then a symbolic link to it,
// replaced in one rename, so that a node reading the store at that moment
// sees the old image or the new one, never half of one; the old directory
// is removed. Writers of one store take turns (a lock file in it).
func WriteImage(store, ref string, img Image) (StoredImage, error) {
	dir, err := StorePath(store, ref)
	if err != nil {
		return StoredImage{}, err
	}
	for p := range img.Paths {
		if c := path.Clean(p); !path.IsAbs(c) || strings.Count(c, "/") > 2 || c == "/" {
			return StoredImage{}, fmt.Errorf("image %s: the path %q is neither a top-level entry nor the entry of a top-level directory", ref, p)
		}
	}
	src, err := resolveImage(ref, img)
	if err != nil {
		return StoredImage{}, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return StoredImage{}, err
	}
	unlock, err := lockStore(store)
	if err != nil {
		return StoredImage{}, err
	}
	defer unlock()
	if err := writeLabels(store, ref, img.Labels); err != nil {
		return StoredImage{}, fmt.Errorf("image %s: writing its labels: %w", ref, err)
	}
	var record any
	if img.Digest != "" {
		if !validDigest(img.Digest) {
			return StoredImage{}, fmt.Errorf("image %s: the digest %q is not sha256:<64 hex digits>", ref, img.Digest)
		}
		record = digestRecord{Digest: img.Digest, Content: src.id}
	}
	if err := writeSidecar(store, ref, digestsDir, record); err != nil {
		return StoredImage{}, fmt.Errorf("image %s: writing its digest: %w", ref, err)
	}
	if cur, err := storeImage(ref, dir); err == nil && cur.id == src.id {
		return StoredImage{Dir: dir, ID: withDigest(cur, img.Digest).id}, nil
	}
	build, err := os.MkdirTemp(filepath.Dir(dir), buildPrefix(dir))
	if err != nil {
		return StoredImage{}, err
	}
	if err := layOut(build, src); err != nil {
		_ = os.RemoveAll(build)
		return StoredImage{}, fmt.Errorf("image %s: %w", ref, err)
	}
	built, err := storeImage(ref, build)
	if err != nil {
		_ = os.RemoveAll(build)
		return StoredImage{}, err
	}
	if err := swapTag(dir, build); err != nil {
		_ = os.RemoveAll(build)
		return StoredImage{}, err
	}
	return StoredImage{Dir: dir, ID: withDigest(built, img.Digest).id, Changed: true}, removeOldBuilds(dir, build)
}

// buildPrefix names the directories of a tag's builds: "." and a "@" no
// tag holds, so that they are neither tags nor another tag's builds.
func buildPrefix(dir string) string { return "." + filepath.Base(dir) + "@" }

// swapTag points the tag dir at the directory build, in one rename.
func swapTag(dir, build string) error {
	link := build + ".link"
	if err := os.Symlink(filepath.Base(build), link); err != nil {
		return err
	}
	err := os.Rename(link, dir)
	if err != nil {
		// A directory made by hand holds the tag: it goes first.
		if st, lerr := os.Lstat(dir); lerr == nil && st.IsDir() {
			if err = os.RemoveAll(dir); err == nil {
				err = os.Rename(link, dir)
			}
		}
	}
	if err != nil {
		_ = os.Remove(link)
		return fmt.Errorf("pointing %s at its new image: %w", dir, err)
	}
	return nil
}

// removeOldBuilds removes the tag's builds but keep (older ones, or those
// an interrupted write left).
func removeOldBuilds(dir, keep string) error {
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		p := filepath.Join(filepath.Dir(dir), e.Name())
		if strings.HasPrefix(e.Name(), buildPrefix(dir)) && p != keep {
			errs = append(errs, os.RemoveAll(p))
		}
	}
	return errors.Join(errs...)
}

// lockStore takes the store's lock file, waiting for another writer.
func lockStore(store string) (func(), error) {
	return filelock.Lock(context.Background(), filepath.Join(store, ".lock"))
}

// layOut writes the paths of img under root, which stands for "/".
func layOut(root string, img image) error {
	if err := os.Chmod(root, 0o755); err != nil {
		return err
	}
	keys := make([]string, 0, len(img.Paths))
	for p := range img.Paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		dest := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return err
		}
		if err := storeTree(dest, img.Paths[p]); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

// storeTree copies the file or tree src to dest as layOut says (links
// inside a tree kept, src itself followed), with the modes of src; a
// directory gets its mode once its content is written.
func storeTree(dest, src string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return storeFile(dest, src, st)
	}
	type dir struct {
		path string
		mode fs.FileMode
	}
	var dirs []dir
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dest, rel)
		info, err := os.Lstat(p)
		if p == src {
			info = st
		}
		switch {
		case err != nil:
			return err
		case info.IsDir():
			dirs = append(dirs, dir{target, info.Mode().Perm()})
			return os.MkdirAll(target, 0o755)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			return storeFile(target, p, info)
		}
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i].path, dirs[i].mode); err != nil {
			return err
		}
	}
	return nil
}

// storeFile hard-links a big regular file, else copies it with its mode
// and mtime.
func storeFile(dest, src string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file, directory or link", src)
	}
	if info.Size() > hashedContentBytes && os.Link(src, dest) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dest, os.O_CREATE|os.O_EXCL|os.O_WRONLY, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Chmod(dest, info.Mode().Perm()); err != nil {
		return err
	}
	return os.Chtimes(dest, time.Time{}, info.ModTime())
}
