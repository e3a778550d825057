package workspace

import (
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// TestSettleSoonLooksAgainAFewTimesAtMost: a pass that found nothing due
// but wrote looks again in SettleAfter (sooner when its own requeue is
// sooner), and only settleTries times in a row: an object whose every
// pass writes must not spin.
func TestSettleSoonLooksAgainAFewTimesAtMost(t *testing.T) {
	e := &Engine{}
	const k = "TerraformMachine/ns/m"
	for i := range settleTries {
		if got := e.settleSoon(k, ctrl.Result{}).RequeueAfter; got != SettleAfter {
			t.Fatalf("look %d: requeue after %s, want %s", i+1, got, SettleAfter)
		}
	}
	if got := e.settleSoon(k, ctrl.Result{}).RequeueAfter; got != 0 {
		t.Errorf("after %d looks in a row: requeue after %s, want none (left to its wakes)", settleTries, got)
	}
	if got := e.settleSoon(k, ctrl.Result{RequeueAfter: time.Hour}).RequeueAfter; got != time.Hour {
		t.Errorf("after %d looks in a row: the pass's own requeue became %s, want it kept (1h)", settleTries, got)
	}
	for _, tc := range []struct {
		name      string
		own, want time.Duration
	}{
		{"no requeue of its own", 0, SettleAfter},
		{"a later one of its own", 10 * time.Minute, SettleAfter},
		{"a sooner one of its own", time.Second, time.Second},
	} {
		if got := e.settleSoon("TerraformMachine/ns/"+tc.name, ctrl.Result{RequeueAfter: tc.own}).RequeueAfter; got != tc.want {
			t.Errorf("%s (%s): requeue after %s, want %s", tc.name, tc.own, got, tc.want)
		}
	}
}
