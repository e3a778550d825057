// Package filelock owns the advisory lock files that let processes of one
// machine share a directory (the image store, the manager image's
// binaries): the lock is an flock(2) on a file (Unix), released when the
// holder unlocks it or dies. It imports only the standard library.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// retry is how often a waiting Lock tries again.
const retry = 100 * time.Millisecond

// Lock takes the exclusive lock of the file at path (made when missing),
// waiting while another process holds it or until ctx ends, and returns
// its release.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for the lock %s, held by another process: %w", path, context.Cause(ctx))
		case <-time.After(retry):
		}
	}
}
