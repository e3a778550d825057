package workspace

import (
	"regexp"
	"slices"
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
// as it was, and LastJob, the newest finished Job of the object when the
// live report began ("" when none). Loaded: it came from the checkpoint,
// not from a pass of this manager; Seen: a pass of its object has run
// since it was loaded.
type liveRecord struct {
	Cond    metav1.Condition
	LastJob string
	Loaded  bool
	Seen    bool
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
// it is kept (and marked seen) while newest, the newest finished Job of
// the object the pass read, is the one the record was kept with. Another
// one finished since, and its outcome was bookkept after the checkpoint
// was saved, maybe by the manager that saved it: the record may be older
// than what the condition said before the live report that stands now,
// which is then left until a Job reports, as if no record had been
// loaded. Job names, not times, so that no two clocks are compared.
func (e *Engine) claimLoaded(k liveKey, r liveRecord, newest string) (any, bool) {
	if r.LastJob != newest {
		if e.replaced.CompareAndDelete(k, r) {
			e.liveChanged.Store(true)
		}
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

// newestFinishedJob names the object's Job that finished last, of those
// the pass read ("" when none).
func (p *pass) newestFinishedJob() string {
	name, newest := "", time.Time{}
	for i := range p.jobs {
		j := &p.jobs[i]
		if done, _, at, _ := jobs.Finished(j); done && (name == "" || at.After(newest) || (at.Equal(newest) && j.Name > name)) {
			name, newest = j.Name, at
		}
	}
	return name
}

// liveEntry is one record of the checkpoint's live reports.
type liveEntry struct {
	UID     types.UID        `json:"uid"`
	Record  metav1.Condition `json:"record"`
	LastJob string           `json:"lastJob,omitempty"`
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
		doc.Entries = append(doc.Entries, liveEntry{UID: key.uid, Record: rec, LastJob: r.LastJob})
		return true
	})
	sort.Slice(doc.Entries, func(i, j int) bool {
		a, b := doc.Entries[i], doc.Entries[j]
		return a.UID < b.UID || (a.UID == b.UID && a.Record.Type < b.Record.Type)
	})
	return doc
}

// maxLiveEntries bounds the records a checkpoint may load (five
// condition types for each of a large fleet's objects).
const maxLiveEntries = 500_000

// loadLiveRecords takes the records of a checkpoint, each unless a pass of
// this manager remembered one for its condition already (newer). Whoever
// can write Secrets in the manager's namespace can write the checkpoint:
// only a record a pass could have kept is taken (a condition type a live
// report covers, a valid condition that is not itself a live report), so
// that none can make a status write fail, and at most maxLiveEntries.
func (e *Engine) loadLiveRecords(doc liveDoc) (loaded, refused int) {
	for _, en := range doc.Entries {
		if loaded+refused >= maxLiveEntries || en.UID == "" || len(en.UID) > 128 || len(en.LastJob) > 253 || !slices.Contains(liveCondTypes, en.Record.Type) || !validRecord(en.Record) {
			refused++
			continue
		}
		rec := metav1.Condition{Type: en.Record.Type, Status: en.Record.Status, Reason: en.Record.Reason, Message: en.Record.Message}
		k := liveKey{en.UID, en.Record.Type}
		if _, had := e.replaced.LoadOrStore(k, liveRecord{Cond: rec, LastJob: en.LastJob, Loaded: true}); !had {
			loaded++
		}
	}
	return loaded, refused
}

// conditionReason is what the API server accepts as a condition's reason.
var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// validRecord: c is a record a pass could have kept: a condition the API
// server accepts that is not a live report, or a record of no condition
// (a first restore's).
func validRecord(c metav1.Condition) bool {
	switch c.Status {
	case "":
		return c.Reason == "" && c.Message == ""
	case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
		return len(c.Reason) <= 1024 && conditionReason.MatchString(c.Reason) && len(c.Message) <= 32768 && !live(c)
	}
	return false
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
