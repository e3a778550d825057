package livereport

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// TestHostileLiveRecordsAreRefused: whoever can write Secrets in the
// manager's namespace can write the checkpoint. A record no pass could
// have kept is refused: one the API server would refuse in a status (an
// invalid status, reason or message, which would fail every status write
// of the object), a live report posing as a record, a condition type no
// live report covers, an oversized UID. A valid one is taken.
func TestHostileLiveRecordsAreRefused(t *testing.T) {
	typ := infrav1.ApplyJobSucceededCondition
	valid := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: infrav1.ApplyFailedReason, Message: "Job a1 failed"}
	for _, tc := range []struct {
		name  string
		entry Entry
		take  bool
	}{
		{"a record a pass keeps", Entry{UID: "u", Record: valid}, true},
		{"a first restore's record of no condition", Entry{UID: "u", Record: metav1.Condition{Type: infrav1.RestoreJobSucceededCondition}}, true},
		{"a status the API server refuses", Entry{UID: "u", Record: metav1.Condition{Type: typ, Status: "Maybe", Reason: "Forged"}}, false},
		{"a reason the API server refuses", Entry{UID: "u", Record: metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "not a reason!"}}, false},
		{"an empty reason", Entry{UID: "u", Record: metav1.Condition{Type: typ, Status: metav1.ConditionTrue}}, false},
		{"a message over the API server's bound", Entry{UID: "u", Record: metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: infrav1.ApplySucceededReason, Message: strings.Repeat("x", 32769)}}, false},
		{"a live report posing as a record", Entry{UID: "u", Record: metav1.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: infrav1.WaitingForJobSlotReason}}, false},
		{"a condition no live report covers", Entry{UID: "u", Record: metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready"}}, false},
		{"no UID", Entry{Record: valid}, false},
		{"an oversized UID", Entry{UID: types.UID(strings.Repeat("u", 129)), Record: valid}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Store
			loaded, refused := s.Take(Doc{Entries: []Entry{tc.entry}})
			if took := loaded == 1 && refused == 0; took != tc.take {
				t.Errorf("loaded %d, refused %d; want it taken: %v", loaded, refused, tc.take)
			}
		})
	}
}
