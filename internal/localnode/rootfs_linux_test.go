package localnode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// TestReadOnlyRootWhileOthersFork: pods start side by side, and each start
// forks. A file mount point made on one container's root while another
// goroutine forks must not keep that root from being made read-only: in
// a loaded run a pod once stayed in CreateContainerError ("making the
// container's root read-only: device or resource busy") for good.
func TestReadOnlyRootWhileOthersFork(t *testing.T) {
	if err := NamespaceSupport(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the local node's namespace mode cannot run here: %v", err)
		}
		t.Skipf("the local node's namespace mode cannot run here: %v", err)
	}
	src := filepath.Join(t.TempDir(), "termination-log")
	if err := os.WriteFile(src, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	stop := make(chan struct{})
	var forks sync.WaitGroup
	for range 4 {
		forks.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					_ = exec.Command("/bin/true").Run()
				}
			}
		})
	}
	result := make(chan error, 1)
	go func() {
		// Never unlocked: the thread leaves with this goroutine, and its
		// mount namespace with it.
		runtime.LockOSThread()
		result <- remountLoop(root, src, 2000)
	}()
	err := <-result
	close(stop)
	forks.Wait()
	if err != nil {
		t.Fatal(err)
	}
}

// remountLoop makes n file mount points on a tmpfs at root, in a private
// mount namespace of the calling thread, making the tmpfs read-only after
// each and writable again.
func remountLoop(root, src string, n int) error {
	if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
		return err
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", root, "tmpfs", 0, "mode=755"); err != nil {
		return err
	}
	for i := range n {
		if err := bind(src, filepath.Join(root, "dev", fmt.Sprintf("log-%d", i)), false); err != nil {
			return fmt.Errorf("mount point %d: %w", i, err)
		}
		if err := syscall.Mount("", root, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("making the root read-only after mount point %d: %w", i, err)
		}
		if err := syscall.Mount("", root, "", syscall.MS_REMOUNT, ""); err != nil {
			return err
		}
	}
	return nil
}
