package livereport

import (
	"regexp"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Format fingerprints the checkpoint of the records: a change of Doc's
// meaning changes it.
const Format = "captf-live-records/v1"

// Key names the condition of one object a live report covers.
type Key struct {
	UID  types.UID
	Type string
}

// Record is the record a live report covers: the condition as it was, and
// LastJob, the newest finished Job of the object when the live report
// began ("" when none). Loaded: it came from the checkpoint, not from a
// pass of this manager; Seen: a pass of its object has run since it was
// loaded.
type Record struct {
	Cond    metav1.Condition
	LastJob string
	Loaded  bool
	Seen    bool
}

// Store holds the records, per object and condition type; the zero value
// is empty and ready. Changed says a record changed since the checkpoint
// saved them (whoever saves swaps it back).
type Store struct {
	records sync.Map
	Changed atomic.Bool
}

// Keep keeps the record a live report covers.
func (s *Store) Keep(k Key, r Record) {
	s.records.Store(k, r)
	s.Changed.Store(true)
}

// Get is the record of k, if any.
func (s *Store) Get(k Key) (Record, bool) {
	v, ok := s.records.Load(k)
	if !ok {
		return Record{}, false
	}
	return v.(Record), true
}

// Forget drops the record of k: its live report's episode ended.
func (s *Store) Forget(k Key) {
	if _, had := s.records.LoadAndDelete(k); had {
		s.Changed.Store(true)
	}
}

// ForgetIf drops the record of k if it is still r (a pass forgets the
// record it said again, not one kept since), and reports whether it did.
func (s *Store) ForgetIf(k Key, r Record) bool {
	if s.records.CompareAndDelete(k, r) {
		s.Changed.Store(true)
		return true
	}
	return false
}

// ForgetObject drops every record of the object uid: it is gone.
func (s *Store) ForgetObject(uid types.UID) {
	for _, t := range Types {
		s.Forget(Key{uid, t})
	}
}

// Claim is a pass's look at r, a record of k loaded from the checkpoint:
// it is kept (and marked seen) while newest, the newest finished Job of
// the object the pass read, is the one the record was kept with. Another
// one finished since, and its outcome was bookkept after the checkpoint
// was saved, maybe by the manager that saved it: the record may be older
// than what the condition said before the live report that stands now,
// which is then left until a Job reports, as if no record had been
// loaded. Job names, not times, so that no two clocks are compared.
func (s *Store) Claim(k Key, r Record, newest string) (Record, bool) {
	if r.LastJob != newest {
		s.ForgetIf(k, r)
		return Record{}, false
	}
	if r.Seen {
		return r, true
	}
	seen := r
	seen.Seen = true
	if !s.records.CompareAndSwap(k, r, seen) {
		return s.Get(k)
	}
	return seen, true
}

// Entry is one record of the checkpoint.
type Entry struct {
	UID     types.UID        `json:"uid"`
	Record  metav1.Condition `json:"record"`
	LastJob string           `json:"lastJob,omitempty"`
}

// Doc is what the checkpoint of the records holds.
type Doc struct {
	Entries []Entry `json:"entries"`
}

// Doc is the records, in a stable order. A record's condition type is its
// key's.
func (s *Store) Doc() Doc {
	var doc Doc
	s.records.Range(func(k, v any) bool {
		key, r := k.(Key), v.(Record)
		rec := r.Cond
		rec.Type = key.Type
		doc.Entries = append(doc.Entries, Entry{UID: key.UID, Record: rec, LastJob: r.LastJob})
		return true
	})
	sort.Slice(doc.Entries, func(i, j int) bool {
		a, b := doc.Entries[i], doc.Entries[j]
		return a.UID < b.UID || (a.UID == b.UID && a.Record.Type < b.Record.Type)
	})
	return doc
}

// MaxEntries bounds the records a checkpoint may load (five condition
// types for each of a large fleet's objects).
const MaxEntries = 500_000

// Take takes the records of a checkpoint, each unless a pass of this
// manager remembered one for its condition already (newer). Whoever can
// write Secrets in the manager's namespace can write the checkpoint: only
// a record a pass could have kept is taken (a condition type a live report
// covers, a valid condition that is not itself a live report), so that
// none can make a status write fail, and at most MaxEntries.
func (s *Store) Take(doc Doc) (loaded, refused int) {
	for _, en := range doc.Entries {
		if loaded+refused >= MaxEntries || en.UID == "" || len(en.UID) > 128 || len(en.LastJob) > 253 || !slices.Contains(Types, en.Record.Type) || !validRecord(en.Record) {
			refused++
			continue
		}
		rec := metav1.Condition{Type: en.Record.Type, Status: en.Record.Status, Reason: en.Record.Reason, Message: en.Record.Message}
		if _, had := s.records.LoadOrStore(Key{en.UID, en.Record.Type}, Record{Cond: rec, LastJob: en.LastJob, Loaded: true}); !had {
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
		return len(c.Reason) <= 1024 && conditionReason.MatchString(c.Reason) && len(c.Message) <= 32768 && !Live(c)
	}
	return false
}

// Expire drops the loaded records whose object no pass has looked at
// since the load: it was deleted while no manager ran.
func (s *Store) Expire() {
	s.records.Range(func(k, v any) bool {
		if r := v.(Record); r.Loaded && !r.Seen && s.records.CompareAndDelete(k, v) {
			s.Changed.Store(true)
		}
		return true
	})
}
