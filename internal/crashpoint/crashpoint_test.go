package crashpoint_test

import (
	"testing"

	"captf.io/captf/internal/crashpoint"
)

// In every build but the soak's, a crash point never kills, whatever the
// environment says: a shipped manager with CAPTF_CRASH_PROBABILITY set by
// mistake keeps running. (The soak's build is exercised by `make soak`.)
func TestShippedBuildNeverCrashes(t *testing.T) {
	t.Setenv(crashpoint.EnvProbability, "1")
	for _, p := range crashpoint.Points {
		crashpoint.Hit(p)
	}
}
