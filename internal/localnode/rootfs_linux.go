package localnode

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// baseLayer are the host directories a container sees read-only, standing
// for its image's base layer: the module images hold only /captf.
var baseLayer = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr", "/etc"}

// devices are the device nodes of a container's /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// mountEntry is one bind mount of a container's root.
type mountEntry struct {
	target, source string
	readOnly       bool
}

// buildRoot mounts a tmpfs at root and builds the container's filesystem
// in it: the base layer, /dev, /proc, /tmp, the image's paths, the volume
// mounts and the termination log; the root itself is read-only when the
// container asks for it. The calling thread is in a private mount
// namespace.
func buildRoot(root string, s *startSpec, sec security) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", root, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=755"); err != nil {
		return fmt.Errorf("mounting the container's root: %w", err)
	}
	entries, err := mountEntries(s)
	if err != nil {
		return err
	}
	if err := base(root, filepath.Join(s.dir, "layers"), entries); err != nil {
		return err
	}
	if err := devAndProc(root); err != nil {
		return err
	}
	if err := mkdirMode(filepath.Join(root, "tmp"), os.ModeSticky|0o777); err != nil {
		return err
	}
	for _, e := range entries {
		if err := bind(e.source, filepath.Join(root, e.target), e.readOnly); err != nil {
			return fmt.Errorf("mounting %s: %w", e.target, err)
		}
	}
	if sec.readOnlyRootFS {
		if err := syscall.Mount("", root, "", syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV, ""); err != nil {
			return fmt.Errorf("making the container's root read-only: %w", err)
		}
	}
	return nil
}

// mountEntries are the image's paths (read-only), the container's volume
// mounts and its termination log, parents before children.
func mountEntries(s *startSpec) ([]mountEntry, error) {
	var out []mountEntry
	for p, host := range s.image.Paths {
		out = append(out, mountEntry{target: path.Clean(p), source: host, readOnly: true})
	}
	for _, m := range s.c.VolumeMounts {
		src, err := subPathSource(s.podDir, m)
		if err != nil {
			return nil, err
		}
		out = append(out, mountEntry{target: path.Clean("/" + m.MountPath), source: src, readOnly: m.ReadOnly})
	}
	out = append(out, mountEntry{target: path.Clean("/" + terminationLogPath(s.c)), source: s.termLog})
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(out[i].target, "/") < strings.Count(out[j].target, "/")
	})
	return out, nil
}

// base shows the host's base layer read-only; a directory that is a link
// on the host (a merged /usr) is the same link. A base directory that
// holds a mount point of the container is an overlay whose upper layer is
// a tmpfs in layers, so that the mount point can be made.
func base(root, layers string, entries []mountEntry) error {
	for _, d := range baseLayer {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, filepath.Join(root, d)); err != nil {
				return err
			}
		case !st.IsDir():
		case holdsMount(d, entries):
			if err := overlay(d, filepath.Join(root, d), filepath.Join(layers, filepath.Base(d))); err != nil {
				return fmt.Errorf("mounting %s: %w", d, err)
			}
		default:
			if err := bind(d, filepath.Join(root, d), true); err != nil {
				return fmt.Errorf("mounting %s: %w", d, err)
			}
		}
	}
	return nil
}

func holdsMount(dir string, entries []mountEntry) bool {
	for _, e := range entries {
		if strings.HasPrefix(e.target, dir+"/") {
			return true
		}
	}
	return false
}

// overlay mounts lower at target with a writable tmpfs layer on top, kept
// in layer.
func overlay(lower, target, layer string) error {
	if err := os.MkdirAll(layer, 0o700); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", layer, "tmpfs", 0, "mode=700"); err != nil {
		return err
	}
	upper, work := filepath.Join(layer, "upper"), filepath.Join(layer, "work")
	for _, d := range []string{upper, work, target} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return syscall.Mount("overlay", target, "overlay", 0, "lowerdir="+lower+",upperdir="+upper+",workdir="+work)
}

// devAndProc gives the container a minimal /dev (the usual devices, the
// standard links, a /dev/shm) and a /proc.
func devAndProc(root string) error {
	dev := filepath.Join(root, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", dev, "tmpfs", syscall.MS_NOSUID, "mode=755"); err != nil {
		return fmt.Errorf("mounting /dev: %w", err)
	}
	for _, d := range devices {
		if _, err := os.Stat("/dev/" + d); err != nil {
			continue
		}
		if err := bind("/dev/"+d, filepath.Join(dev, d), false); err != nil {
			return fmt.Errorf("mounting /dev/%s: %w", d, err)
		}
	}
	links := map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	shm := filepath.Join(dev, "shm")
	if err := os.Mkdir(shm, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("shm", shm, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=1777"); err != nil {
		return fmt.Errorf("mounting /dev/shm: %w", err)
	}
	proc := filepath.Join(root, "proc")
	if err := os.Mkdir(proc, 0o555); err != nil {
		return err
	}
	if err := syscall.Mount("proc", proc, "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	return nil
}

// bind mounts source at target, creating the mount point (a directory, or
// an empty file for a file), read-only when asked.
func bind(source, target string, readOnly bool) error {
	st, err := os.Stat(source)
	if err != nil {
		return err
	}
	if st.IsDir() {
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := placeholder(target); err != nil {
			return err
		}
	}
	if err := syscall.Mount(source, target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return err
	}
	if readOnly {
		return syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
	}
	return nil
}

// placeholder makes an empty regular file at target for a file bind
// mount, without opening it: a file open for writing on the container's
// root, even for a moment, is inherited by any process another goroutine
// forks meanwhile and stays open in it until that process execs, and while
// it is open the root cannot be made read-only (EBUSY).
func placeholder(target string) error {
	err := syscall.Mknod(target, syscall.S_IFREG|0o644, 0)
	if errors.Is(err, os.ErrExist) {
		// What is there may be a link (the image's /bin/sh over the host's
		// link to dash): the mount follows it, to a file.
		if st, serr := os.Stat(target); serr == nil && st.IsDir() {
			return fmt.Errorf("the mount point %s of a file is a directory", target)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("making the mount point %s: %w", target, err)
	}
	return nil
}

func mkdirMode(p string, mode os.FileMode) error {
	if err := os.MkdirAll(p, 0o755); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}
