package workspace

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/checkpoint"
	"captf.io/captf/internal/livereport"
	"captf.io/captf/internal/test/envtest"
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

// TestLiveRecordsSurviveTheCheckpoint: the records the live reports cover
// are saved in the manager's namespace and loaded by the next manager
// (of any build: their fingerprint is their format), which then says a
// record again when its live report ends; a checkpoint of another format
// is not loaded. Only the records' condition types are taken.
func TestLiveRecordsSurviveTheCheckpoint(t *testing.T) {
	envtest.Require(t, env)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "live-records-"}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	store := func(format string) checkpoint.Store {
		return checkpoint.Store{Client: env.Client, Reader: env.Client, Namespace: ns.Name, Name: "live-test", Fingerprint: format}
	}
	applied := metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason, Message: "Job a1 applied the current inputs"}
	k := livereport.Key{UID: "uid-1", Type: infrav1.ApplyJobSucceededCondition}
	old := &Engine{}
	old.live.Keep(k, livereport.Record{Cond: applied, LastJob: "captf-c-demo-apply-a1-0a1b2c"})
	old.live.Keep(livereport.Key{UID: "uid-1", Type: infrav1.ReadyCondition}, livereport.Record{Cond: applied}) // not a live report's type
	if !old.live.Changed.Load() {
		t.Fatal("a record kept does not mark the checkpoint out of date")
	}
	if err := (&Checkpointer{Engine: old, Live: store(livereport.Format)}).saveLive(t.Context()); err != nil {
		t.Fatal(err)
	}

	next := &Engine{}
	(&Checkpointer{Engine: next, Live: store(livereport.Format)}).loadLive(t.Context())
	r, ok := next.live.Get(k)
	if !ok {
		t.Fatal("the next manager did not load the record of the live report")
	}
	if r.Cond != applied || !r.Loaded || r.LastJob != "captf-c-demo-apply-a1-0a1b2c" {
		t.Errorf("loaded %+v, want the record %+v with its last Job, marked loaded", r, applied)
	}
	if _, ok := next.live.Get(livereport.Key{UID: "uid-1", Type: infrav1.ReadyCondition}); ok {
		t.Error("a record of a condition no live report covers was loaded")
	}
	other := &Engine{}
	(&Checkpointer{Engine: other, Live: store("captf-live-records/v0")}).loadLive(t.Context())
	if _, ok := other.live.Get(k); ok {
		t.Error("a checkpoint of another format was loaded")
	}
}

// TestLoadedLiveRecordsOfObjectsGoneAreDropped: a loaded record whose
// object no pass looked at since the load is of an object deleted while
// no manager ran: it goes at the expiry. One a pass looked at stays, and
// a record this manager kept is not touched.
func TestLoadedLiveRecordsOfObjectsGoneAreDropped(t *testing.T) {
	e := &Engine{}
	e.live.Take(livereport.Doc{Entries: []livereport.Entry{
		{UID: "gone", Record: metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason}},
		{UID: "seen", Record: metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason}},
	}})
	own := livereport.Key{UID: "own", Type: infrav1.DriftJobSucceededCondition}
	e.live.Keep(own, livereport.Record{Cond: metav1.Condition{Type: infrav1.DriftJobSucceededCondition}})
	seen := livereport.Key{UID: "seen", Type: infrav1.ApplyJobSucceededCondition}
	r, _ := e.live.Get(seen)
	if _, ok := e.live.Claim(seen, r, ""); !ok {
		t.Fatal("a pass with no Job finished since lost the loaded record")
	}
	c := &Checkpointer{Engine: e, Expire: time.Minute, loadedAt: time.Now().Add(-2 * time.Minute)}
	e.live.Changed.Store(false)
	c.expire()
	if _, ok := e.live.Get(livereport.Key{UID: "gone", Type: infrav1.ApplyJobSucceededCondition}); ok {
		t.Error("the loaded record of an object no pass looked at is still kept")
	}
	for _, k := range []livereport.Key{seen, own} {
		if _, ok := e.live.Get(k); !ok {
			t.Errorf("%s's record was dropped", k.UID)
		}
	}
	if !e.live.Changed.Load() {
		t.Error("dropping a record does not mark the checkpoint out of date")
	}
}
