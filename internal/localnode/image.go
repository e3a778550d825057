package localnode

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"captf.io/captf/internal/jobs"
)

// RunnerPathInImage is where the manager's image holds the runner binary,
// which the init container of every Job copies out.
const RunnerPathInImage = "/runner"

// Image is what an image reference holds on this node: absolute paths of
// the image's filesystem, each mapped to the host file or directory holding
// its content. A container sees them read-only.
type Image struct {
	Paths map[string]string
	// Labels are the image's config labels, which a store keeps beside it
	// (ImageLabels), as a registry serves them.
	Labels map[string]string
	// Digest is the manifest digest of an image imported from a
	// registry's format (ImportImage): a store reports its ID as
	// <repository>@<digest>, and finds it by that digest.
	Digest string
}

// ModuleImage lays out a module image per the image contract: the module
// directory at /captf/module, the runtime binary (tofu or terraform) at
// /captf/runtime and, when providers is not empty, the provider mirror at
// /captf/providers.
func ModuleImage(module, runtimeBin, providers string) Image {
	img := Image{Paths: map[string]string{jobs.ModuleDir: module, jobs.RuntimePath: runtimeBin}}
	if providers != "" {
		img.Paths[jobs.ProvidersDir] = providers
	}
	return img
}

// RunnerImage is an image holding the runner binary at /runner, as the
// manager's image does.
func RunnerImage(runnerBin string) Image {
	return Image{Paths: map[string]string{RunnerPathInImage: runnerBin}}
}

// image is an Image checked and given its ID.
type image struct {
	Image
	ref string
	// id is the image ID a container status reports:
	// <repository>@sha256:<digest of the content>.
	id string
}

// AddImage gives the node ref's image in memory, as a push to a registry
// would: a container waiting to pull ref gets it at its next pull.
func (n *Node) AddImage(ref string, img Image) error {
	resolved, err := resolveImages(map[string]Image{ref: img})
	if err != nil {
		return fmt.Errorf("localnode: %w", err)
	}
	n.images.add(ref, resolved[ref])
	return nil
}

// resolveImages checks that every path of every image exists and computes
// the image IDs: <repository>@<manifest digest> for an image that has one
// (UnpackImage), as a registry's image reports it.
func resolveImages(images map[string]Image) (map[string]image, error) {
	out := make(map[string]image, len(images))
	for ref, img := range images {
		resolved, err := resolveImage(ref, img)
		if err != nil {
			return nil, err
		}
		if img.Digest != "" && !validDigest(img.Digest) {
			return nil, fmt.Errorf("image %s: the digest %q is not sha256:<64 hex digits>", ref, img.Digest)
		}
		out[ref] = withDigest(resolved, img.Digest)
	}
	return out, nil
}

// resolveImage checks that every path of img exists and computes its ID.
func resolveImage(ref string, img Image) (image, error) {
	if len(img.Paths) == 0 {
		return image{}, fmt.Errorf("image %s holds no path", ref)
	}
	paths := make(map[string]string, len(img.Paths))
	for p, host := range img.Paths {
		if !path.IsAbs(p) {
			return image{}, fmt.Errorf("image %s: the path %q is not absolute", ref, p)
		}
		abs, err := filepath.Abs(host)
		if err != nil {
			return image{}, err
		}
		if _, err := os.Stat(abs); err != nil {
			return image{}, fmt.Errorf("image %s: %s is missing: %w", ref, p, err)
		}
		paths[path.Clean(p)] = abs
	}
	sum, err := contentDigest(paths)
	if err != nil {
		return image{}, fmt.Errorf("image %s: %w", ref, err)
	}
	return image{Image: Image{Paths: paths}, ref: ref, id: repository(ref) + "@sha256:" + sum}, nil
}

// lookup finds the image of a reference: by the reference itself, or, for a
// digest reference (<repository>@sha256:<hex>) such as a manager pins from
// a container status, by the image ID.
func lookup(images map[string]image, ref string) (image, bool) {
	if img, ok := images[ref]; ok {
		return img, true
	}
	if !strings.Contains(ref, "@sha256:") {
		return image{}, false
	}
	for _, img := range images {
		if img.id == ref {
			return img, true
		}
	}
	return image{}, false
}

// knownRefs lists the references an unknown one is reported against.
func knownRefs(images map[string]image) []string {
	refs := make([]string, 0, len(images))
	for ref := range images {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	return refs
}

// repository is a reference without its digest and tag.
func repository(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		ref = ref[:colon]
	}
	return ref
}

// refDigest is the image ID reported for a container the node stands in
// for without its image: a digest of the reference.
func refDigest(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return repository(ref) + "@sha256:" + hex.EncodeToString(sum[:])
}

// hashedContentBytes is the size up to which a file's content is hashed;
// a larger one (a runtime or provider binary) counts by size and mtime.
const hashedContentBytes = 1 << 20

// contentDigest hashes what an image holds: each path, and for every file
// under it its relative name, mode, size and content (or mtime, for a big
// one). It changes when the module is edited or a tool rebuilt, and not
// when the same content is copied or hard-linked elsewhere with its mtimes
// (an image store).
func contentDigest(paths map[string]string) (string, error) {
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, p := range keys {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
		if err := hashTree(h, paths[p]); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashTree(h hash.Hash, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		info, err := os.Stat(p) // follows links, as a bind mount or copy does
		if errors.Is(err, fs.ErrNotExist) && d.Type()&fs.ModeSymlink != 0 {
			// A dangling link (an imported image's /etc/mtab) counts by
			// its target.
			link, err := os.Readlink(p)
			fmt.Fprintf(h, "%d:%s->%s;", len(rel), rel, link)
			return err
		}
		if err != nil {
			return err
		}
		// A directory's size depends on the filesystem holding it, not on
		// what the image holds: only a file's size counts.
		if !info.Mode().IsRegular() {
			fmt.Fprintf(h, "%d:%s,%o;", len(rel), rel, info.Mode())
			return nil
		}
		fmt.Fprintf(h, "%d:%s,%o,%d:", len(rel), rel, info.Mode(), info.Size())
		if info.Size() > hashedContentBytes {
			fmt.Fprintf(h, "%d;", info.ModTime().UnixNano())
			return nil
		}
		data, err := os.ReadFile(p)
		h.Write(data)
		return err
	})
}
