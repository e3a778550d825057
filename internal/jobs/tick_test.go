package jobs

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"captf.io/captf/internal/decide"
)

// TestTick: the name hash of a Job tells apart runs of the same inputs
// the way the reference's table says: a drift remediation by the drift
// check it answers, a refresh or drift by the last successful one, a plain
// apply by nothing.
func TestTick(t *testing.T) {
	ticks := Ticks{LastDriftCheck: &metav1.Time{Time: t0}, LastRefresh: &metav1.Time{Time: t0.Add(-time.Hour)}, Restore: "tfstate-backup-abc-7"}
	testCases := []struct {
		op     decide.Operation
		reason decide.Reason
		want   string
	}{
		{decide.OpApply, decide.ReasonInputsChanged, ""},
		{decide.OpApply, decide.ReasonDriftRemediation, "remediate/2026-11-29T12:00:00Z"},
		{decide.OpDrift, decide.ReasonDriftDue, "2026-11-29T12:00:00Z"},
		{decide.OpRefresh, decide.ReasonHealthPending, "2026-11-29T11:00:00Z"},
		{decide.OpDestroy, decide.ReasonDeleting, ""},
		{decide.OpRestore, decide.ReasonRestoreRequested, "restore/tfstate-backup-abc-7"},
	}
	for _, tc := range testCases {
		if got := ticks.Tick(tc.op, tc.reason == decide.ReasonDriftRemediation); got != tc.want {
			t.Errorf("tick(%s, %s) = %q, want %q", tc.op, tc.reason, got, tc.want)
		}
	}
}
