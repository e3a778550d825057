package livereport

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
)

var (
	// applied is a record; waiting a live report over it.
	applied = metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason,
		Message: "Job c-apply-a1 applied the current inputs", ObservedGeneration: 3, LastTransitionTime: metav1.Unix(1, 0)}
	waiting = metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionUnknown, Reason: infrav1.WaitingForRunLeaseReason,
		Message: "Job c-drift-a1 holds the run lease"}
)

// TestCovers: a live report beginning remembers the condition it covers
// (without its generation and time), or the type's first record when the
// object has none yet; a live report over another goes on covering what
// the first one remembered.
func TestCovers(t *testing.T) {
	const typ = infrav1.ApplyJobSucceededCondition
	testCases := []struct {
		name    string
		cur     *metav1.Condition
		covered bool
		keep    bool
		want    metav1.Condition
	}{
		{"over a record", &applied, false, true, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason, Message: applied.Message}},
		{"over a record, one kept already (the record moved on)", &applied, true, true, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason, Message: applied.Message}},
		{"over no condition", nil, false, true, conditions.FirstRecord(typ)},
		{"over no condition, another manager's record kept", nil, true, false, metav1.Condition{}},
		{"over a live report", &waiting, false, false, metav1.Condition{}},
		{"over a live report, its record kept", &waiting, true, false, metav1.Condition{}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r, keep := Covers(typ, tc.cur, tc.covered, "c-apply-a1")
			if keep != tc.keep || r.Cond != tc.want || (keep && r.LastJob != "c-apply-a1") {
				t.Errorf("Covers = %+v, %t; want %+v, %t, naming the newest Job", r, keep, tc.want, tc.keep)
			}
		})
	}
}

// TestClose: what becomes of a live report's episode at the end of a
// pass, each rule a row.
func TestClose(t *testing.T) {
	rec := Record{Cond: metav1.Condition{Type: applied.Type, Status: applied.Status, Reason: applied.Reason, Message: applied.Message}}
	none := Record{Cond: metav1.Condition{Type: infrav1.DriftDetectedCondition}}
	testCases := []struct {
		name string
		e    Ending
		want Closing
	}{
		{"said as a record: the episode ends", Ending{Said: &applied, Stored: &waiting, Rec: rec, Found: true, Reached: true}, Closing{Forget: true}},
		{"said as a record, nothing kept", Ending{Said: &applied, Stored: &waiting, Reached: true}, Closing{}},
		{"said again as a live report: it goes on", Ending{Said: &waiting, Stored: &waiting, Rec: rec, Found: true, Reached: true}, Closing{}},
		{"not said, decision reached: the record again", Ending{Stored: &waiting, Rec: rec, Found: true, Reached: true}, Closing{Say: &rec.Cond, Forget: true}},
		{"not said, the record is that there was none", Ending{Stored: &waiting, Rec: none, Found: true, Reached: true}, Closing{Drop: true, Forget: true}},
		{"not said, the pass stopped before its decision", Ending{Stored: &waiting, Rec: rec, Found: true}, Closing{}},
		{"not said, no record kept (no checkpoint)", Ending{Stored: &waiting, Reached: true}, Closing{}},
		{"not said, the object carries a record", Ending{Stored: &applied, Rec: rec, Found: true, Reached: true}, Closing{}},
		{"not said, the object carries none", Ending{Rec: rec, Found: true, Reached: true}, Closing{}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Close(tc.e)
			if got.Drop != tc.want.Drop || got.Forget != tc.want.Forget || (got.Say == nil) != (tc.want.Say == nil) || (got.Say != nil && *got.Say != *tc.want.Say) {
				t.Errorf("Close = %+v, want %+v", got, tc.want)
			}
		})
	}
}
