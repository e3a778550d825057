package workspace

import (
	"testing"
	"time"
)

// TestFingerprint: a checkpoint is loaded only by the build and the engine
// options that saved it; the same build and options always give the same
// fingerprint (a restart), any difference another one.
func TestFingerprint(t *testing.T) {
	base := Options{RunnerImage: "captf:v1", DriftDefault: 30 * time.Minute, MaxActiveJobs: 10}
	fp := func(build string, o Options) string {
		t.Helper()
		f, err := Fingerprint(build, o)
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

// TestLoadedRecordsOfObjectsGoneAreDropped: a record loaded from the
// checkpoint that no pass replayed for Expire after the load is of an
// object deleted (or moved out of the manager's scope) while no manager
// ran: it is dropped, and so not saved again. One replayed since stays.
func TestLoadedRecordsOfObjectsGoneAreDropped(t *testing.T) {
	e := &Engine{}
	c := &Checkpointer{Engine: e, Expire: time.Minute, loadedAt: time.Now().Add(-2 * time.Minute)}
	e.memos.Store("TerraformMachine/ns/gone", memo{})
	e.restores.Store("TerraformMachine/ns/gone", map[string]float64{})
	e.memos.Store("TerraformMachine/ns/replayed", memo{})
	c.expire()
	if _, ok := e.memos.Load("TerraformMachine/ns/gone"); ok {
		t.Error("the record of an object no pass replayed since the load is still kept")
	}
	if _, ok := e.memos.Load("TerraformMachine/ns/replayed"); !ok {
		t.Error("a record replayed since the load was dropped")
	}
	if !e.memoChanged.Load() {
		t.Error("dropping a record does not mark the checkpoint out of date")
	}

	c.loadedAt = time.Now()
	e.memos.Store("TerraformMachine/ns/early", memo{})
	e.restores.Store("TerraformMachine/ns/early", map[string]float64{})
	c.expire()
	if _, ok := e.memos.Load("TerraformMachine/ns/early"); !ok {
		t.Error("a loaded record was dropped before Expire")
	}
}

// TestAForgetWhileLoadingLeavesATombstone: a Forget (a variablesFrom
// source changed) while the checkpoint loads must win over the load, which
// checks the tombstone after inserting; once loaded, no tombstone is left.
func TestAForgetWhileLoadingLeavesATombstone(t *testing.T) {
	e := &Engine{restored: make(chan struct{})}
	e.forget("TerraformCluster/ns/c")
	if _, ok := e.tombstones.Load("TerraformCluster/ns/c"); !ok {
		t.Fatal("a forget during the load left no tombstone: the load would bring the record back")
	}
	close(e.restored)
	e.forget("TerraformCluster/ns/d")
	if _, ok := e.tombstones.Load("TerraformCluster/ns/d"); ok {
		t.Error("a forget after the load left a tombstone")
	}
}
