package workspace

import (
	"context"
	"errors"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/readset"
	"captf.io/captf/internal/roles"
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

// TestAFailedPassLeavesTheCountOfLooks: passes that alternate between
// failing and finding nothing due but writing stop looking again after
// settleTries looks too; an object gone starts the count over.
func TestAFailedPassLeavesTheCountOfLooks(t *testing.T) {
	e := &Engine{Memo: &readset.View{}}
	role, key := roles.Machine{}, client.ObjectKey{Namespace: "ns", Name: "m"}
	k := memoKey(role, key)
	for range settleTries {
		e.settleSoon(k, ctrl.Result{})
		e.remember(context.Background(), role, key, nil, nil, ctrl.Result{}, errors.New("the API server is away"))
	}
	if got := e.settleSoon(k, ctrl.Result{}).RequeueAfter; got != 0 {
		t.Errorf("after %d looks between failed passes: requeue after %s, want none", settleTries, got)
	}
	e.remember(context.Background(), role, key, nil, nil, ctrl.Result{}, nil) // the object is gone
	if got := e.settleSoon(k, ctrl.Result{}).RequeueAfter; got != SettleAfter {
		t.Errorf("after the object was gone: requeue after %s, want %s", got, SettleAfter)
	}
}
