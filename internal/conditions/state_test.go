package conditions

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// TestStateReadable: one row per way reading a state can end, each with
// what the user can do about it.
func TestStateReadable(t *testing.T) {
	const secret = "tfstate-default-c-demo-0a1b2c3d"
	testCases := []struct {
		name    string
		facts   StateFacts
		status  metav1.ConditionStatus
		reason  string
		says    []string
		notSays string
	}{
		{"read", StateFacts{Secret: secret, Read: true, Serial: 7, Resources: 3, CompressedBytes: 2048},
			metav1.ConditionTrue, infrav1.StateReadReason, []string{"serial 7", "3 resources", "2048 bytes"}, ""},
		{"retained by a deleted object of the name", StateFacts{Secret: secret, RetainedFrom: "uid-1", Read: true},
			metav1.ConditionFalse, infrav1.RetainedStateFoundReason, []string{secret, "uid-1", "spec.adoptRetainedState"}, ""},
		{"none yet", StateFacts{Secret: secret, NotFound: true}, metav1.ConditionUnknown, infrav1.StateNotFoundReason, []string{"No state yet"}, ""},
		{"lost after an apply", StateFacts{Secret: secret, NotFound: true, EverApplied: true, UnconfirmedJob: "j"},
			metav1.ConditionFalse, infrav1.StateLostReason, []string{secret, "state-restore runbook"}, ""},
		{"deleted by the cleanup after a successful destroy", StateFacts{Secret: secret, NotFound: true, EverApplied: true, Deleting: true, Destroyed: true},
			metav1.ConditionUnknown, infrav1.StateNotFoundReason, []string{"destroy succeeded", secret}, "runbook"},
		{"read halfway deleted by the cleanup after a successful destroy", StateFacts{Secret: secret, Unreadable: infrav1.StateInconsistentReason, Deleting: true, Destroyed: true},
			metav1.ConditionUnknown, infrav1.StateNotFoundReason, []string{"destroy succeeded", secret}, "runbook"},
		{"no state after an apply whose outcome is unknown", StateFacts{Secret: secret, NotFound: true, UnconfirmedJob: "captf-c-demo-apply-a1-0abc12"},
			metav1.ConditionFalse, infrav1.ApplyOutcomeUnknownReason, []string{secret, infrav1.ConfirmNoResourcesAnnotation + "=captf-c-demo-apply-a1-0abc12"}, "deletionPolicy"},
		{"the same while deleting offers Retain", StateFacts{Secret: secret, NotFound: true, UnconfirmedJob: "j", Deleting: true},
			metav1.ConditionFalse, infrav1.ApplyOutcomeUnknownReason, []string{"spec.deletionPolicy: Retain"}, ""},
		{"unreadable", StateFacts{Secret: secret, Unreadable: infrav1.StateCorruptReason},
			metav1.ConditionFalse, infrav1.StateCorruptReason, []string{secret, "state-unreadable runbook"}, ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c := StateReadable(tc.facts)
			if c.Type != infrav1.StateReadableCondition || c.Status != tc.status || c.Reason != tc.reason {
				t.Fatalf("StateReadable = %+v, want %s/%s", c, tc.status, tc.reason)
			}
			wantSays(t, c.Message, tc.says, tc.notSays)
		})
	}
}

// wantSays fails unless msg says each of says, and not notSays (when set).
func wantSays(t *testing.T, msg string, says []string, notSays string) {
	t.Helper()
	for _, s := range says {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not say %q", msg, s)
		}
	}
	if notSays != "" && strings.Contains(msg, notSays) {
		t.Errorf("message %q says %q", msg, notSays)
	}
}

// TestStateLockedQuotesBoundedFields: whoever can write the lock Lease
// writes what StateLocked quotes; each field is cut at 256 bytes, on a
// rune boundary, so that a huge lock info cannot break the status write.
func TestStateLockedQuotesBoundedFields(t *testing.T) {
	huge := strings.Repeat("é", 4096)
	c := StateLocked(huge, huge, huge)
	if len(c.Message) > 3*(maxLockField+8)+300 {
		t.Errorf("StateLocked message is %d bytes, want each field cut at %d", len(c.Message), maxLockField)
	}
	if !utf8.ValidString(c.Message) || !strings.Contains(c.Message, "…") {
		t.Errorf("the cut fields are not valid UTF-8 or not marked as cut: %q", c.Message[:80])
	}
	if short := StateLocked("alice@laptop", "OperationTypeApply", "2026-12-05T01:00:00Z"); !strings.Contains(short.Message, `"alice@laptop"`) || strings.Contains(short.Message, "…") {
		t.Errorf("a short lock info is quoted whole: %q", short.Message)
	}
}
