package scale_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
)

// ProfileDirEnv names a directory where the fleet benchmark writes a CPU
// profile of each cold start and idle period, and a heap profile at the
// end of each idle period (make scale sets out/scale-profiles).
const ProfileDirEnv = "CAPTF_SCALE_PROFILE_DIR"

// memProfileRate is the heap profiles' sampling interval when profiles
// are written: a sixteenth of the runtime's default, fine enough to show
// a few KiB per machine over a few hundred machines.
const memProfileRate = 32 << 10

// profiler writes the profiles of one fleet, named <prefix>-<what>.
type profiler struct {
	dir, prefix string
}

func newProfiler(prefix string) (profiler, error) {
	dir := os.Getenv(ProfileDirEnv)
	if dir == "" {
		return profiler{}, nil
	}
	return profiler{dir: dir, prefix: prefix}, os.MkdirAll(dir, 0o755)
}

// cpu profiles the process's CPU until the returned function is first
// called.
func (p profiler) cpu(what string) (stop func() error, err error) {
	if p.dir == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(p.path(what + ".cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("profiling %s: %w", what, err)
	}
	return sync.OnceValue(func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}), nil
}

// heap writes a heap profile of what is live now (the caller collects
// garbage first).
func (p profiler) heap(what string) error {
	if p.dir == "" {
		return nil
	}
	f, err := os.Create(p.path(what + ".heap.pprof"))
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func (p profiler) path(name string) string { return filepath.Join(p.dir, p.prefix+"-"+name) }
