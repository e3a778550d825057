package filelock_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"captf.io/captf/internal/filelock"
)

// While a holder has the lock, another cannot take it; once released,
// another does.
func TestLockIsExclusiveUntilReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := filelock.Lock(path)
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
	unlock()
	again, err := filelock.Lock(path)
	if err != nil {
		t.Fatalf("the lock could not be taken once released: %v", err)
	}
	again()
}
