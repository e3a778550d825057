// Package filelock owns the advisory lock files that let processes of one
// machine share a directory (the image store, the manager image's
// binaries): the lock is an flock(2) on a file, released when the holder
// unlocks it or dies. It imports only the standard library.
package filelock

import (
	"fmt"
	"os"
	"syscall"
)

// Lock takes the exclusive lock of the file at path (made when missing),
// waiting while another process holds it, and returns its release.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { _ = f.Close() }, nil
}
