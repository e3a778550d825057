package livereport

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"captf.io/captf/internal/conditions"
)

// Covers is the record a live report of condition type typ begins to
// cover, as the pass has the condition (cur, nil when the object has
// none): the condition as it is, or, when there is none yet and no record
// is kept already (covered), the type's first record; lastJob names the
// object's newest finished Job. keep is false when a live report already
// covers the condition (the one that began remembered the record, or
// another manager did).
func Covers(typ string, cur *metav1.Condition, covered bool, lastJob string) (r Record, keep bool) {
	switch {
	case cur == nil && !covered:
		return Record{Cond: conditions.FirstRecord(typ), LastJob: lastJob}, true
	case cur != nil && !Live(*cur):
		return Record{Cond: conditions.Fact(*cur), LastJob: lastJob}, true
	}
	return Record{}, false
}

// Ending is what a pass knows of a condition a live report may cover, as
// its status is computed.
type Ending struct {
	// Said is the condition the pass set (nil: none); Stored the one the
	// object carries.
	Said, Stored *metav1.Condition
	// Rec is the record kept for it, when Found.
	Rec   Record
	Found bool
	// Reached: the pass completed and reached its decision (the Job
	// started, its image came, it is no longer due or held); a pass that
	// stopped earlier (paused, waiting for its owner) did not look.
	Reached bool
}

// Closing is what becomes of a live report's episode at the end of a
// pass: the record said again (Say), or the condition removed when its
// record is that there was none (Drop); Forget: the record goes once the
// status is written.
type Closing struct {
	Say          *metav1.Condition
	Drop, Forget bool
}

// Close ends the episode e describes: a pass that said the condition as a
// record ends it (its record is stale), one that said it as a live report
// again goes on with it; a pass that reached its decision without saying
// the live report the object carries says its record again.
func Close(e Ending) Closing {
	if e.Said != nil {
		return Closing{Forget: !Live(*e.Said) && e.Found}
	}
	if !e.Reached || e.Stored == nil || !Live(*e.Stored) || !e.Found {
		return Closing{}
	}
	if e.Rec.Cond.Status == "" {
		return Closing{Drop: true, Forget: true}
	}
	c := e.Rec.Cond
	return Closing{Say: &c, Forget: true}
}
