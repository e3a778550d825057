//go:build captfsoak

package crashpoint

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
)

func parseProbability(v string) float64 {
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || p != p || p < 0 { // p != p: NaN
		return 0
	}
	return min(p, 1)
}

// hit kills the process with SIGKILL, as the kernel or a node would,
// with the configured probability: no deferred function, no flush.
func hit(name string) {
	probability := parseProbability(os.Getenv(EnvProbability))
	if probability == 0 || rand.Float64() >= probability {
		return
	}
	fmt.Fprintf(os.Stderr, "crash point %s\n", name)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal lands before anything else runs here
}
