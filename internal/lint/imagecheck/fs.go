package imagecheck

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"captf.io/captf/internal/lint"
)

// Caps on what reading one image may take: kept (the module's files, the
// mirror's JSON indexes, /etc/passwd and /etc/group, and headerCost per
// tar header) and scanned without keeping (every layer, uncompressed).
// Variables so that tests can lower them.
var (
	maxKept    int64 = 512 << 20
	maxScanned int64 = 16 << 30
)

// headerCost is what one tar header counts against maxKept: its entry's
// metadata is kept, wherever it is.
const headerCost = 512

// The paths of the image contract the checks read.
const (
	moduleDir   = "/captf/module"
	runtimePath = "/captf/runtime"
	mirrorDir   = "/captf/providers"
	passwdPath  = "/etc/passwd"
	groupPath   = "/etc/group"
)

// Whiteout names of the OCI layer format.
const (
	whiteoutPrefix = ".wh."
	opaqueWhiteout = ".wh..wh..opq"
)

// node is one entry of the image's file system, its layers applied.
type node struct {
	kind     byte // tar.TypeDir, tar.TypeReg, tar.TypeSymlink or another tar type
	mode     int64
	uid, gid int
	link     string // a symbolic link's target
	size     int64
	// implicit: a directory only the paths of other entries imply.
	implicit bool
	// tomb and opaque are 1 + the layer (counted from the top) whose
	// whiteout removed this path, or emptied this directory below it.
	tomb, opaque int
	// data is a kept file's contents; host where a module file was
	// written.
	data []byte
	host string
	// src is the file a hard link names.
	src      *node
	children map[string]*node
}

func newDir(implicit bool) *node {
	return &node{kind: tar.TypeDir, mode: 0o755, implicit: implicit, children: map[string]*node{}}
}

// child is the entry name of n, nil when absent or whited out.
func (n *node) child(name string) *node {
	if n == nil || n.kind != tar.TypeDir {
		return nil
	}
	c := n.children[name]
	if c == nil || c.tomb != 0 {
		return nil
	}
	return c
}

// fsys is the image's file system: every entry's metadata, and the
// contents the checks need.
type fsys struct {
	ctx  context.Context
	root *node
	// moduleHost is the host directory /captf/module is extracted to.
	moduleHost    string
	kept, scanned int64
	capErr        error
	layerFiles    map[string]*node // the regular files of the layer being read, for its hard links
	ref           string
	layer, layers int
}

// readImage applies img's layers from the top one down (an entry of an
// upper layer, or its whiteout, hides the same path of the layers below),
// writing the module's files under moduleHost.
func readImage(ctx context.Context, ref string, img v1.Image, moduleHost string) (*fsys, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, lint.Unreadable("reading the layers of image %s: %w", ref, err)
	}
	f := &fsys{ctx: ctx, root: newDir(true), moduleHost: moduleHost, ref: ref, layers: len(layers)}
	for d := range layers {
		f.layer = d
		if err := f.readLayer(layers[len(layers)-1-d]); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *fsys) readLayer(layer v1.Layer) error {
	rc, err := layer.Uncompressed()
	if err != nil {
		return f.unreadable(err)
	}
	defer func() { _ = rc.Close() }()
	r := &counter{f: f, r: rc}
	tr := tar.NewReader(r)
	f.layerFiles = map[string]*node{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return f.unreadable(err)
		}
		if err := f.keep(headerCost); err != nil {
			return err
		}
		if err := f.add(hdr, tr); err != nil {
			return f.unreadable(err)
		}
	}
	// Reading to the end verifies the layer's digest.
	if _, err := io.Copy(io.Discard, r); err != nil {
		return f.unreadable(err)
	}
	return nil
}

// unreadable is the error of a layer that could not be read: the cap it
// passed, else err.
func (f *fsys) unreadable(err error) error {
	if f.capErr != nil {
		return f.capErr
	}
	var lerr *lint.UnreadableError
	if errors.As(err, &lerr) {
		return err
	}
	return lint.Unreadable("reading layer %d of %d of image %s: %w", f.layers-f.layer, f.layers, f.ref, err)
}

// keep counts n more bytes kept.
func (f *fsys) keep(n int64) error {
	f.kept += n
	if f.kept > maxKept {
		f.capErr = lint.Unreadable("image %s holds more than the %s tfcapi-lint keeps (the module's files, the provider mirror's JSON indexes and 512 bytes per file): it is not linted", f.ref, bytesize(maxKept))
		return f.capErr
	}
	return nil
}

// bytesize writes n bytes in the largest binary unit that divides it.
func bytesize(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// counter counts what is read of a layer against maxScanned.
type counter struct {
	f *fsys
	r io.Reader
}

func (c *counter) Read(p []byte) (int, error) {
	if err := c.f.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.f.scanned += int64(n)
	if c.f.scanned > maxScanned {
		c.f.capErr = lint.Unreadable("image %s has more than the %s of uncompressed layers tfcapi-lint reads: it is not linted", c.f.ref, bytesize(maxScanned))
		return n, c.f.capErr
	}
	return n, err
}

// add applies one entry of the layer being read.
func (f *fsys) add(hdr *tar.Header, r io.Reader) error {
	name := path.Clean("/" + hdr.Name)
	if name == "/" {
		if hdr.Typeflag == tar.TypeDir && f.root.implicit {
			f.root.mode, f.root.uid, f.root.gid, f.root.implicit = hdr.Mode&0o7777, hdr.Uid, hdr.Gid, false
		}
		return nil
	}
	dir, base := path.Split(name)
	parent := f.dirAt(dir)
	switch {
	case parent == nil:
		return nil // under a path an upper layer removed or replaced
	case base == opaqueWhiteout:
		if parent.opaque == 0 {
			parent.opaque = f.layer + 1
		}
		return nil
	case strings.HasPrefix(base, whiteoutPrefix):
		// A path an upper layer made again keeps what that layer put
		// there, but nothing of the layers below.
		switch old := parent.children[strings.TrimPrefix(base, whiteoutPrefix)]; {
		case old == nil:
			parent.children[strings.TrimPrefix(base, whiteoutPrefix)] = &node{tomb: f.layer + 1}
		case old.kind == tar.TypeDir && old.opaque == 0:
			old.opaque = f.layer + 1
		}
		return nil
	}
	n, err := f.entry(name, hdr)
	if err != nil || n == nil {
		return err
	}
	if n.kind == tar.TypeReg {
		f.layerFiles[name] = n
	}
	if old := parent.children[base]; old != nil {
		if old.implicit && old.tomb == 0 && n.kind == tar.TypeDir {
			old.mode, old.uid, old.gid, old.implicit = n.mode, n.uid, n.gid, false
		}
		return nil
	}
	parent.children[base] = n
	return f.keepContents(name, n, r)
}

// hidden tells whether an upper layer emptied dir (an entry of the layer
// being read is not hidden by its own layer's opaque whiteout).
func (f *fsys) hidden(dir *node) bool { return dir.opaque != 0 && dir.opaque-1 < f.layer }

// dirAt walks to the directory dir, making the directories its path
// implies; nil when an upper layer removed it, emptied it or one of its
// parents, or put something else there.
func (f *fsys) dirAt(dir string) *node {
	cur := f.root
	for _, c := range strings.Split(strings.Trim(dir, "/"), "/") {
		if f.hidden(cur) {
			return nil
		}
		if c == "" {
			continue
		}
		next := cur.children[c]
		switch {
		case next == nil:
			next = newDir(true)
			cur.children[c] = next
		case next.tomb != 0 || next.kind != tar.TypeDir:
			return nil
		}
		cur = next
	}
	if f.hidden(cur) {
		return nil
	}
	return cur
}

// entry is the node of hdr; a hard link takes the metadata (and kept
// contents) of the file it names. It is nil for an entry to skip.
func (f *fsys) entry(name string, hdr *tar.Header) (*node, error) {
	n := &node{kind: hdr.Typeflag, mode: hdr.Mode & 0o7777, uid: hdr.Uid, gid: hdr.Gid, size: hdr.Size}
	switch hdr.Typeflag {
	case tar.TypeReg:
		n.kind = tar.TypeReg
	case tar.TypeDir:
		n.children = map[string]*node{}
	case tar.TypeSymlink:
		n.link = hdr.Linkname
	case tar.TypeLink:
		target := path.Clean("/" + hdr.Linkname)
		t := f.layerFiles[target]
		if t == nil {
			t, _, _ = f.resolve(target, false)
		}
		if t == nil || t.kind != tar.TypeReg {
			if inside(name, moduleDir) {
				return nil, fmt.Errorf("%s is a hard link to %s, which its layer does not hold before it", name, target)
			}
			return nil, nil // not a file the checks read
		}
		c := *t
		c.host, c.src = "", t
		return &c, nil
	}
	return n, nil
}

// keepContents keeps what the checks read of a regular file: a module
// file (written under moduleHost), a mirror's JSON index, /etc/passwd and
// /etc/group.
func (f *fsys) keepContents(name string, n *node, r io.Reader) error {
	if n.kind != tar.TypeReg || n.data != nil {
		return nil
	}
	switch {
	case inside(name, moduleDir):
		if err := f.keep(n.size); err != nil {
			return err
		}
		n.host = f.hostPath(name)
		if n.src == nil {
			return writeFile(n.host, io.LimitReader(r, n.size))
		}
		if n.src.host == "" {
			return fmt.Errorf("%s is a hard link to a file whose contents tfcapi-lint did not keep: copy the file instead", name)
		}
		in, err := os.Open(n.src.host)
		if err != nil {
			return err
		}
		defer func() { _ = in.Close() }()
		return writeFile(n.host, in)
	case inside(name, mirrorDir) && strings.HasSuffix(name, ".json"), name == passwdPath, name == groupPath:
		if err := f.keep(n.size); err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(r, n.size))
		n.data = data
		return err
	}
	return nil
}

func (f *fsys) hostPath(name string) string {
	return filepath.Join(f.moduleHost, filepath.FromSlash(strings.TrimPrefix(name, moduleDir+"/")))
}

func writeFile(p string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// inside tells whether p is strictly under dir.
func inside(p, dir string) bool { return strings.HasPrefix(p, dir+"/") }
