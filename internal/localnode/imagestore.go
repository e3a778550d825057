package localnode

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// An image store is a directory of image root filesystems, the local
// node's registry: the image of the reference <repository>:<tag> is the
// directory <store>/<repository>/<tag> (tag "latest" when the reference
// has none), whose content is the image's "/". The node reads it when a
// container starts, as a kubelet pulls, so an image written while the node
// runs is seen by the next container.
//
// A container sees each entry of the root's top-level directories (such as
// /captf/module, /captf/runtime, /captf/providers) and each top-level file
// as one read-only path of its image: the top-level directories themselves
// stay the container's own, so that its volumes (/captf/work, /tmp, ...)
// can be mounted in them.

// ErrNoImage is the error of a reference the store does not hold.
var ErrNoImage = errors.New("no such image")

// storeRef is a reference split as a store lays it out.
type storeRef struct {
	// repo is the repository, a relative path of the store.
	repo string
	// tag is empty for a reference by digest alone.
	tag string
	// digest is "sha256:<hex>" for a reference by digest.
	digest string
}

// parseStoreRef splits ref into its repository, tag and digest. It refuses
// what is not a path below the store: an empty, "." or ".." component, a
// tag that starts with "." (the store's own entries do).
func parseStoreRef(ref string) (storeRef, error) {
	name, digest, _ := strings.Cut(ref, "@")
	r := storeRef{repo: name, digest: digest}
	if colon := strings.LastIndex(name, ":"); colon > strings.LastIndex(name, "/") {
		r.repo, r.tag = name[:colon], name[colon+1:]
		if r.tag == "" {
			return storeRef{}, fmt.Errorf("the reference %q has an empty tag", ref)
		}
	}
	if r.tag == "" && r.digest == "" {
		r.tag = "latest"
	}
	for _, c := range strings.Split(r.repo, "/") {
		if c == "" || c == "." || c == ".." || strings.ContainsAny(c, "\\\x00") {
			return storeRef{}, fmt.Errorf("the reference %q does not name a repository", ref)
		}
	}
	if strings.HasPrefix(r.tag, ".") || strings.ContainsAny(r.tag, "/\\\x00") {
		return storeRef{}, fmt.Errorf("the reference %q has an invalid tag", ref)
	}
	if r.digest != "" && !validDigest(r.digest) {
		return storeRef{}, fmt.Errorf("the reference %q has an invalid digest (want sha256:<64 hex digits>)", ref)
	}
	return r, nil
}

func validDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	return strings.Trim(hex, "0123456789abcdef") == ""
}

// StorePath is the directory of a tagged reference in the image store
// store: <store>/<repository>/<tag>.
func StorePath(store, ref string) (string, error) {
	r, err := parseStoreRef(ref)
	if err != nil {
		return "", err
	}
	if r.tag == "" {
		return "", fmt.Errorf("the reference %q has no tag: a store directory is named by a tag", ref)
	}
	return filepath.Join(store, filepath.FromSlash(r.repo), r.tag), nil
}

// rootImage is the image whose root filesystem is the directory root: each
// top-level file, and each entry of each top-level directory, is a path of
// the image.
func rootImage(root string) (Image, error) {
	st, err := os.Stat(root)
	if err != nil {
		return Image{}, err
	}
	if !st.IsDir() {
		return Image{}, fmt.Errorf("%s is not a directory", root)
	}
	top, err := os.ReadDir(root)
	if err != nil {
		return Image{}, err
	}
	img := Image{Paths: map[string]string{}}
	for _, e := range top {
		host := filepath.Join(root, e.Name())
		if !e.IsDir() {
			img.Paths["/"+e.Name()] = host
			continue
		}
		entries, err := os.ReadDir(host)
		if err != nil {
			return Image{}, err
		}
		for _, c := range entries {
			img.Paths[path.Join("/", e.Name(), c.Name())] = filepath.Join(host, c.Name())
		}
	}
	return img, nil
}

// imageSet is what a node has: the images given in memory, then those of
// its image store.
type imageSet struct {
	mu    sync.RWMutex
	mem   map[string]image
	store string
}

// add makes ref's image one the node has in memory.
func (s *imageSet) add(ref string, img image) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem[ref] = img
}

// pull finds the image of ref: in memory by reference or image ID, else in
// the store by tag (checking the digest when the reference has one too) or
// by image ID among the repository's tags. Its error says what was looked
// for, as a kubelet's failed pull does.
func (s *imageSet) pull(ref string) (image, error) {
	s.mu.RLock()
	img, ok := lookup(s.mem, ref)
	var why []string
	if !ok && len(s.mem) > 0 {
		why = append(why, "it has "+strings.Join(knownRefs(s.mem), ", "))
	}
	s.mu.RUnlock()
	if ok {
		return img, nil
	}
	if s.store != "" {
		img, err := s.fromStore(ref)
		if err == nil {
			return img, nil
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		why = append(why, "it has no image")
	}
	return image{}, fmt.Errorf("the CAPTF local node has no such image (%s)", strings.Join(why, "; "))
}

// fromStore reads the image of ref from the store.
func (s *imageSet) fromStore(ref string) (image, error) {
	r, err := parseStoreRef(ref)
	if err != nil {
		return image{}, err
	}
	repoDir := filepath.Join(s.store, filepath.FromSlash(r.repo))
	if r.tag != "" {
		img, err := s.tagImage(ref, r.repo+":"+r.tag, filepath.Join(repoDir, r.tag))
		switch {
		case errors.Is(err, ErrNoImage):
			return image{}, fmt.Errorf("no directory %s%s", filepath.Join(repoDir, r.tag), tagsHint(repoDir))
		case err != nil:
			return image{}, err
		case r.digest != "" && img.id != repository(ref)+"@"+r.digest:
			return image{}, fmt.Errorf("%s is %s, not %s", filepath.Join(repoDir, r.tag), img.id, r.digest)
		}
		return img, nil
	}
	for _, tag := range storeTags(repoDir) {
		img, err := s.tagImage(ref, r.repo+":"+tag, filepath.Join(repoDir, tag))
		if err == nil && img.id == repository(ref)+"@"+r.digest {
			return img, nil
		}
	}
	return image{}, fmt.Errorf("no tag of %s holds %s", repoDir, r.digest)
}

// tagImage reads the image of the tagged reference tagged, at dir, for
// ref: with the ID of its manifest digest when it was imported and still
// holds the content it was imported with.
func (s *imageSet) tagImage(ref, tagged, dir string) (image, error) {
	img, err := storeImage(ref, dir)
	if err != nil {
		return image{}, err
	}
	var rec digestRecord
	if ok, err := readSidecar(s.store, tagged, digestsDir, &rec); err != nil || !ok {
		return img, err
	}
	if rec.Content != img.id {
		return img, nil
	}
	return withDigest(img, rec.Digest), nil
}

// withDigest is img with the ID of the manifest digest digest, if any.
func withDigest(img image, digest string) image {
	if digest != "" {
		img.id = repository(img.ref) + "@" + digest
	}
	return img
}

// storeImage reads the image whose root is dir.
func storeImage(ref, dir string) (image, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return image{}, ErrNoImage
	}
	img, err := rootImage(dir)
	if err != nil {
		return image{}, fmt.Errorf("reading the image %s: %w", dir, err)
	}
	resolved, err := resolveImage(ref, img)
	if err != nil {
		return image{}, fmt.Errorf("reading the image %s: %w", dir, err)
	}
	return resolved, nil
}

// storeTags lists the tags a repository directory holds.
func storeTags(repoDir string) []string {
	entries, err := os.ReadDir(repoDir)
	if err != nil {
		return nil
	}
	var tags []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if st, err := os.Stat(filepath.Join(repoDir, e.Name())); err == nil && st.IsDir() {
			tags = append(tags, e.Name())
		}
	}
	sort.Strings(tags)
	return tags
}

func tagsHint(repoDir string) string {
	if tags := storeTags(repoDir); len(tags) > 0 {
		return " (its tags: " + strings.Join(tags, ", ") + ")"
	}
	return ""
}
