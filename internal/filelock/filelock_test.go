package filelock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"captf.io/captf/internal/filelock"
)

// While a holder has the lock, another cannot take it, and a Lock whose
// context ends stops waiting; once released, another takes it.
func TestLockIsExclusiveUntilReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := filelock.Lock(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("another took the lock while it was held: %v", err)
	}
	waiting, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := filelock.Lock(waiting, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("a Lock whose context ended while the lock was held gave %v, want it to stop waiting", err)
	}
	unlock()
	again, err := filelock.Lock(t.Context(), path)
	if err != nil {
		t.Fatalf("the lock could not be taken once released: %v", err)
	}
	again()
}
