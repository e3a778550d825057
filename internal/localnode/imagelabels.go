package localnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"captf.io/captf/internal/atomicfile"
)

// What a registry serves beside an image's files is kept beside its tag,
// where no container sees it, each written whole (one rename) by
// WriteImage:
//   - the image's config labels (the io.captf.* labels of the image
//     contract) as <store>/<repository>/.labels/<tag>.json, read by
//     ImageLabels;
//   - for an image imported from a registry's format (ImportImage), its
//     manifest digest as <store>/<repository>/.digests/<tag>.json, with the
//     content it was recorded for: the image's ID while the tag holds that
//     content.

// sidecarPath is the file of ref's tag in the store's side directory dir.
func sidecarPath(store, ref, dir string) (string, error) {
	tagDir, err := StorePath(store, ref)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(tagDir), dir, filepath.Base(tagDir)+".json"), nil
}

// writeSidecar makes the store hold v for ref in dir; a nil v removes it.
func writeSidecar(store, ref, dir string, v any) error {
	p, err := sidecarPath(store, ref, dir)
	if err != nil {
		return err
	}
	if v == nil {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(p, data, 0o644)
}

// readSidecar reads ref's file in dir into v; false when there is none.
func readSidecar(store, ref, dir string, v any) (bool, error) {
	p, err := sidecarPath(store, ref, dir)
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("reading %s: %w", p, err)
	}
	return true, nil
}

const (
	labelsDir  = ".labels"
	digestsDir = ".digests"
)

// writeLabels makes the store hold labels for ref; none removes them.
func writeLabels(store, ref string, labels map[string]string) error {
	if len(labels) == 0 {
		return writeSidecar(store, ref, labelsDir, nil)
	}
	return writeSidecar(store, ref, labelsDir, labels)
}

// ImageLabels returns the labels of the image the store holds under the
// tagged reference ref (nil when it has none), or an error wrapping
// ErrNoImage when the store does not hold ref.
func ImageLabels(store, ref string) (map[string]string, error) {
	dir, err := StorePath(store, ref)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoImage, ref)
	}
	var labels map[string]string
	if _, err := readSidecar(store, ref, labelsDir, &labels); err != nil {
		return nil, fmt.Errorf("reading the labels of %s: %w", ref, err)
	}
	return labels, nil
}

// digestRecord is an imported image's manifest digest and the image ID of
// the content it was recorded for (<repository>@sha256:<content digest>).
type digestRecord struct {
	Digest  string `json:"digest"`
	Content string `json:"content"`
}

// ImageDigest returns the manifest digest of the image the store holds
// under the tagged reference ref, when it was stored with one (ImportImage,
// StoreImage) and its directory still holds the content it was stored
// with; "" otherwise. A reference the store does not hold is an error
// wrapping ErrNoImage.
func ImageDigest(store, ref string) (string, error) {
	dir, err := StorePath(store, ref)
	if err != nil {
		return "", err
	}
	img, err := storeImage(ref, dir)
	if err != nil {
		return "", err
	}
	var rec digestRecord
	if ok, err := readSidecar(store, ref, digestsDir, &rec); err != nil || !ok || rec.Content != img.id {
		return "", err
	}
	return rec.Digest, nil
}
