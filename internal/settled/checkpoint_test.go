package settled

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/checkpoint"
	"captf.io/captf/internal/livereport"
	"captf.io/captf/internal/test/envtest"
)

// env is the real API server the checkpoints are saved on.
var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

// TestLoadedRecordsOfObjectsGoneAreDropped: a record loaded from the
// checkpoint that no pass replayed for Expire after the load is of an
// object deleted (or moved out of the manager's scope) while no manager
// ran: it is dropped, and so not saved again. One replayed since stays.
func TestLoadedRecordsOfObjectsGoneAreDropped(t *testing.T) {
	r := &Records{}
	c := &Checkpointer{Records: r, Reports: &livereport.Store{}, Expire: time.Minute, loadedAt: time.Now().Add(-2 * time.Minute)}
	r.memos.Store("TerraformMachine/ns/gone", memo{})
	r.restores.Store("TerraformMachine/ns/gone", map[string]float64{})
	r.memos.Store("TerraformMachine/ns/replayed", memo{})
	c.expire()
	if _, ok := r.memos.Load("TerraformMachine/ns/gone"); ok {
		t.Error("the record of an object no pass replayed since the load is still kept")
	}
	if _, ok := r.memos.Load("TerraformMachine/ns/replayed"); !ok {
		t.Error("a record replayed since the load was dropped")
	}
	if !r.changed.Load() {
		t.Error("dropping a record does not mark the checkpoint out of date")
	}

	c.loadedAt = time.Now()
	r.memos.Store("TerraformMachine/ns/early", memo{})
	r.restores.Store("TerraformMachine/ns/early", map[string]float64{})
	c.expire()
	if _, ok := r.memos.Load("TerraformMachine/ns/early"); !ok {
		t.Error("a loaded record was dropped before Expire")
	}
}

// TestAForgetWhileLoadingLeavesATombstone: a Forget (a variablesFrom
// source changed) while the checkpoint loads must win over the load, which
// checks the tombstone after inserting; once loaded, no tombstone is left.
func TestAForgetWhileLoadingLeavesATombstone(t *testing.T) {
	r := &Records{restored: make(chan struct{})}
	r.Forget("TerraformCluster/ns/c")
	if _, ok := r.tombstones.Load("TerraformCluster/ns/c"); !ok {
		t.Fatal("a forget during the load left no tombstone: the load would bring the record back")
	}
	close(r.restored)
	r.Forget("TerraformCluster/ns/d")
	if _, ok := r.tombstones.Load("TerraformCluster/ns/d"); ok {
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
	old := &livereport.Store{}
	old.Keep(k, livereport.Record{Cond: applied, LastJob: "captf-c-demo-apply-a1-0a1b2c"})
	old.Keep(livereport.Key{UID: "uid-1", Type: infrav1.ReadyCondition}, livereport.Record{Cond: applied}) // not a live report's type
	if !old.Changed.Load() {
		t.Fatal("a record kept does not mark the checkpoint out of date")
	}
	if err := (&Checkpointer{Reports: old, Live: store(livereport.Format)}).saveLive(t.Context()); err != nil {
		t.Fatal(err)
	}

	next := &livereport.Store{}
	(&Checkpointer{Reports: next, Live: store(livereport.Format)}).loadLive(t.Context())
	r, ok := next.Get(k)
	if !ok {
		t.Fatal("the next manager did not load the record of the live report")
	}
	if r.Cond != applied || !r.Loaded || r.LastJob != "captf-c-demo-apply-a1-0a1b2c" {
		t.Errorf("loaded %+v, want the record %+v with its last Job, marked loaded", r, applied)
	}
	if _, ok := next.Get(livereport.Key{UID: "uid-1", Type: infrav1.ReadyCondition}); ok {
		t.Error("a record of a condition no live report covers was loaded")
	}
	other := &livereport.Store{}
	(&Checkpointer{Reports: other, Live: store("captf-live-records/v0")}).loadLive(t.Context())
	if _, ok := other.Get(k); ok {
		t.Error("a checkpoint of another format was loaded")
	}
}

// TestLoadedLiveRecordsOfObjectsGoneAreDropped: a loaded record whose
// object no pass looked at since the load is of an object deleted while
// no manager ran: it goes at the expiry. One a pass looked at stays, and
// a record this manager kept is not touched.
func TestLoadedLiveRecordsOfObjectsGoneAreDropped(t *testing.T) {
	reports := &livereport.Store{}
	reports.Take(livereport.Doc{Entries: []livereport.Entry{
		{UID: "gone", Record: metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason}},
		{UID: "seen", Record: metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason}},
	}})
	own := livereport.Key{UID: "own", Type: infrav1.DriftJobSucceededCondition}
	reports.Keep(own, livereport.Record{Cond: metav1.Condition{Type: infrav1.DriftJobSucceededCondition}})
	seen := livereport.Key{UID: "seen", Type: infrav1.ApplyJobSucceededCondition}
	r, _ := reports.Get(seen)
	if _, ok := reports.Claim(seen, r, ""); !ok {
		t.Fatal("a pass with no Job finished since lost the loaded record")
	}
	c := &Checkpointer{Records: &Records{}, Reports: reports, Expire: time.Minute, loadedAt: time.Now().Add(-2 * time.Minute)}
	reports.Changed.Store(false)
	c.expire()
	if _, ok := reports.Get(livereport.Key{UID: "gone", Type: infrav1.ApplyJobSucceededCondition}); ok {
		t.Error("the loaded record of an object no pass looked at is still kept")
	}
	for _, k := range []livereport.Key{seen, own} {
		if _, ok := reports.Get(k); !ok {
			t.Errorf("%s's record was dropped", k.UID)
		}
	}
	if !reports.Changed.Load() {
		t.Error("dropping a record does not mark the checkpoint out of date")
	}
}
