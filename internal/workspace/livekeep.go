package workspace

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"captf.io/captf/internal/jobs"
)

// LiveRecordsFormat fingerprints the checkpoint of the live reports'
// records: a change of liveDoc's meaning changes it.
const LiveRecordsFormat = "captf-live-records/v1"

// liveRecord is the record a live report covers (live.go): the condition
// as it was, and when the live report began. Loaded: it came from the
// checkpoint, not from a pass of this manager; Seen: a pass of its object
// has run since it was loaded.
type liveRecord struct {
	Cond   metav1.Condition
	At     time.Time
	Loaded bool
	Seen   bool
}

// keepRecord keeps the record a live report covers.
func (e *Engine) keepRecord(k liveKey, r liveRecord) {
	e.replaced.Store(k, r)
	e.liveChanged.Store(true)
}

// forgetRecord drops the record of k: its live report's episode ended.
func (e *Engine) forgetRecord(k liveKey) {
	if _, had := e.replaced.LoadAndDelete(k); had {
		e.liveChanged.Store(true)
	}
}

// claimLoaded is a pass's look at a record loaded from the checkpoint:
// it is kept (and marked seen) unless a Job of the object finished after
// its live report began. Such a Job's outcome was bookkept after the
// checkpoint was saved, maybe by the manager that saved it, so the record
// may be older than what the condition said before the live report that
// stands now: that one is left until a Job reports, as if no record had
// been loaded.
func (e *Engine) claimLoaded(k liveKey, r liveRecord, finishedSince func(time.Time) bool) (any, bool) {
	if finishedSince(r.At) {
		e.replaced.CompareAndDelete(k, r)
		e.liveChanged.Store(true)
		return nil, false
	}
	if r.Seen {
		return r, true
	}
	seen := r
	seen.Seen = true
	if !e.replaced.CompareAndSwap(k, r, seen) {
		return e.replaced.Load(k)
	}
	return seen, true
}

// jobFinishedSince: a Job of the object the pass read finished after t.
func (p *pass) jobFinishedSince(t time.Time) bool {
	for i := range p.jobs {
		if done, _, at, _ := jobs.Finished(&p.jobs[i]); done && at.After(t) {
			return true
		}
	}
	return false
}

// liveEntry is one record of the checkpoint's live reports.
type liveEntry struct {
	UID    types.UID        `json:"uid"`
	Record metav1.Condition `json:"record"`
	At     time.Time        `json:"at"`
}

// liveDoc is what the checkpoint of the live reports' records holds.
type liveDoc struct {
	Entries []liveEntry `json:"entries"`
}

// liveRecords are the records the engine holds, in a stable order. The
// record's condition type is its key's.
func (e *Engine) liveRecords() liveDoc {
	var doc liveDoc
	e.replaced.Range(func(k, v any) bool {
		key, r := k.(liveKey), v.(liveRecord)
		rec := r.Cond
		rec.Type = key.condType
		doc.Entries = append(doc.Entries, liveEntry{UID: key.uid, Record: rec, At: r.At})
		return true
	})
	sort.Slice(doc.Entries, func(i, j int) bool {
		a, b := doc.Entries[i], doc.Entries[j]
		return a.UID < b.UID || (a.UID == b.UID && a.Record.Type < b.Record.Type)
	})
	return doc
}

// loadLiveRecords takes the records of a checkpoint, each unless a pass of
// this manager remembered one for its condition already (newer), and
// only for the condition types a live report covers.
func (e *Engine) loadLiveRecords(doc liveDoc) int {
	n := 0
	for _, en := range doc.Entries {
		if en.UID == "" || !liveCondType(en.Record.Type) {
			continue
		}
		k := liveKey{en.UID, en.Record.Type}
		if _, had := e.replaced.LoadOrStore(k, liveRecord{Cond: en.Record, At: en.At, Loaded: true}); !had {
			n++
		}
	}
	return n
}

// expireLiveRecords drops the loaded records whose object no pass has
// looked at since the load: it was deleted while no manager ran.
func (e *Engine) expireLiveRecords() {
	e.replaced.Range(func(k, v any) bool {
		if r := v.(liveRecord); r.Loaded && !r.Seen && e.replaced.CompareAndDelete(k, v) {
			e.liveChanged.Store(true)
		}
		return true
	})
}

func liveCondType(t string) bool {
	for _, c := range liveCondTypes {
		if c == t {
			return true
		}
	}
	return false
}
