// Package atomicfile owns writing a file whole: the data goes to a
// temporary file beside it, which is renamed over it, so that a reader
// sees the old content or the new, never half of it. It imports only the
// standard library, so that the static runner may use it.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write makes p hold data with the permissions perm, through a rename.
// p's directory must exist.
func Write(p string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}
