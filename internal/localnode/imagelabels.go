package localnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The labels of a stored image, the config labels a registry serves (the
// io.captf.* labels of the image contract), are kept beside its tag as
// <store>/<repository>/.labels/<tag>.json: written whole (one rename) by
// WriteImage, read by ImageLabels. A container never sees them.

func labelsPath(store, ref string) (string, error) {
	dir, err := StorePath(store, ref)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(dir), ".labels", filepath.Base(dir)+".json"), nil
}

// writeLabels makes the store hold labels for ref; none removes them.
func writeLabels(store, ref string, labels map[string]string) error {
	p, err := labelsPath(store, ref)
	if err != nil {
		return err
	}
	if len(labels) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := json.Marshal(labels)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), p)
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
	p, err := labelsPath(store, ref)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var labels map[string]string
	if err := json.Unmarshal(data, &labels); err != nil {
		return nil, fmt.Errorf("reading the labels of %s: %w", ref, err)
	}
	return labels, nil
}
