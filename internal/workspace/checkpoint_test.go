package workspace

import (
	"testing"
	"time"

	"captf.io/captf/internal/settled"
)

// TestFingerprint: a checkpoint is loaded only by the build and the engine
// options that saved it; the same build and options always give the same
// fingerprint (a restart), any difference another one.
func TestFingerprint(t *testing.T) {
	base := Options{RunnerImage: "captf:v1", DriftDefault: 30 * time.Minute, MaxActiveJobs: 10}
	fp := func(build string, o Options) string {
		t.Helper()
		f, err := settled.Fingerprint(build, o)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	want := fp("build-1", base)
	if again := fp("build-1", base); again != want {
		t.Fatalf("the same build and options fingerprint %s, then %s", want, again)
	}
	other := base
	other.ImagePullGrace = time.Second
	for name, got := range map[string]string{
		"another build":        fp("build-2", base),
		"other engine options": fp("build-1", other),
	} {
		if got == want {
			t.Errorf("%s: same fingerprint %s: a checkpoint it did not save would be loaded", name, got)
		}
	}
}
