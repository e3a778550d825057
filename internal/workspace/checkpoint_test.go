package workspace

import (
	"testing"
	"time"

	"captf.io/captf/internal/checkpoint"
	"captf.io/captf/internal/readset"
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

// TestTheCheckpointerCarriesTheEngine: the engine's Checkpointer saves
// and loads the engine's own records (settled and live), replays through
// its view, and fingerprints the engine's options as they are when it
// starts, not when it was made.
func TestTheCheckpointerCarriesTheEngine(t *testing.T) {
	e := &Engine{Memo: &readset.View{}, Options: Options{RunnerImage: "captf:v1"}}
	c := e.NewCheckpointer(checkpoint.Store{Name: "settled-test"}, "build-1")
	if c.Records != &e.memos || c.Reports != &e.live || c.View != e.Memo || c.Now == nil || c.Build != "build-1" || c.Store.Name != "settled-test" {
		t.Fatalf("the Checkpointer does not carry the engine's records, view, clock, build and store: %+v", c)
	}
	e.Options.RunnerImage = "captf:v2"
	if o, ok := c.Config().(Options); !ok || o.RunnerImage != "captf:v2" {
		t.Errorf("the fingerprinted configuration is %+v, want the engine's options as they are now", c.Config())
	}
}
