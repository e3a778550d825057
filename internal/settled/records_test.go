package settled

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/readset"
	"captf.io/captf/internal/test/envtest"
)

// TestSettleSoonLooksAgainAFewTimesAtMost: a pass that found nothing due
// but wrote looks again in SettleAfter (sooner when its own requeue is
// sooner), and only settleTries times in a row: an object whose every
// pass writes must not spin.
func TestSettleSoonLooksAgainAFewTimesAtMost(t *testing.T) {
	r := &Records{}
	const k = "TerraformMachine/ns/m"
	for i := range settleTries {
		if got := r.settleSoon(k, ctrl.Result{}).RequeueAfter; got != SettleAfter {
			t.Fatalf("look %d: requeue after %s, want %s", i+1, got, SettleAfter)
		}
	}
	if got := r.settleSoon(k, ctrl.Result{}).RequeueAfter; got != 0 {
		t.Errorf("after %d looks in a row: requeue after %s, want none (left to its wakes)", settleTries, got)
	}
	if got := r.settleSoon(k, ctrl.Result{RequeueAfter: time.Hour}).RequeueAfter; got != time.Hour {
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
		if got := r.settleSoon("TerraformMachine/ns/"+tc.name, ctrl.Result{RequeueAfter: tc.own}).RequeueAfter; got != tc.want {
			t.Errorf("%s (%s): requeue after %s, want %s", tc.name, tc.own, got, tc.want)
		}
	}
}

// TestAFailedPassLeavesTheCountOfLooks: passes that alternate between
// failing and finding nothing due but writing stop looking again after
// settleTries looks too; an object gone starts the count over.
func TestAFailedPassLeavesTheCountOfLooks(t *testing.T) {
	r, view := &Records{}, &readset.View{}
	k := Key("TerraformMachine", client.ObjectKey{Namespace: "ns", Name: "m"})
	for range settleTries {
		r.settleSoon(k, ctrl.Result{})
		r.Remember(context.Background(), view, k, metrics.Object{}, nil, nil, ctrl.Result{}, errors.New("the API server is away"))
	}
	if got := r.settleSoon(k, ctrl.Result{}).RequeueAfter; got != 0 {
		t.Errorf("after %d looks between failed passes: requeue after %s, want none", settleTries, got)
	}
	r.Remember(context.Background(), view, k, metrics.Object{}, nil, nil, ctrl.Result{}, nil) // the object is gone
	if got := r.settleSoon(k, ctrl.Result{}).RequeueAfter; got != SettleAfter {
		t.Errorf("after the object was gone: requeue after %s, want %s", got, SettleAfter)
	}
}

// TestASettledPassIsSkippedWhileItsReadsHold: the record of a settled
// pass skips the object's next passes, with what is left of its own
// requeue, while everything it read reads the same on the API server;
// a change of what it read, or its requeue coming, sends the object
// through a full pass again and drops the record. A pass that was not
// quiet, or that wrote, leaves no record.
func TestASettledPassIsSkippedWhileItsReadsHold(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "settled-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "source"}, Data: map[string]string{"a": "1"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	view := &readset.View{Live: env.Client, Scheme: env.Scheme}
	reader := readset.Reader(env.Client, env.Scheme)
	// pass reads the ConfigMap as a pass would, and says how it ended.
	pass := func(r *Records, k string, said *Pass, requeue time.Duration) ctrl.Result {
		t.Helper()
		pctx, reads := readset.Start(ctx)
		if err := reader.Get(pctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
			t.Fatal(err)
		}
		return r.Remember(ctx, view, k, metrics.Object{Kind: "TerraformMachine", Namespace: ns.Name, Name: "m"}, said, reads, ctrl.Result{RequeueAfter: requeue}, nil)
	}
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	k := Key("TerraformMachine", client.ObjectKey{Namespace: ns.Name, Name: "m"})

	r := &Records{}
	pass(r, k, &Pass{Quiet: true, Settled: true, Now: at}, 10*time.Minute)
	if r.Len() != 1 {
		t.Fatalf("a settled pass left %d records, want 1", r.Len())
	}
	res, skipped := r.Recall(ctx, view, k, clockAt(at.Add(4*time.Minute)))
	if !skipped || res.RequeueAfter != 6*time.Minute {
		t.Fatalf("Recall 4m later = %v, %v; want the pass skipped, looking again in the 6m left of its requeue", res, skipped)
	}
	if r.Skips() != 1 {
		t.Errorf("Skips = %d, want 1", r.Skips())
	}
	if _, skipped := r.Recall(ctx, view, k, clockAt(at.Add(10*time.Minute))); skipped {
		t.Error("the pass was skipped once its own requeue came")
	}
	if r.Len() != 0 {
		t.Error("the record stayed after its requeue came")
	}

	pass(r, k, &Pass{Quiet: true, Settled: true, Now: at}, 0)
	cm.Data["a"] = "2"
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if _, skipped := r.Recall(ctx, view, k, clockAt(at.Add(time.Hour))); skipped {
		t.Error("the pass was skipped after what it read changed")
	}
	if r.Len() != 0 {
		t.Error("the record stayed after what it read changed")
	}

	for name, said := range map[string]*Pass{
		"a pass that was not quiet":          {Now: at},
		"a quiet pass with something to say": {Quiet: true, Now: at},
		"no pass (the object is gone)":       nil,
	} {
		r := &Records{}
		pass(r, k, said, 0)
		if _, skipped := r.Recall(ctx, view, k, clockAt(at)); skipped || r.Len() != 0 {
			t.Errorf("%s left a record that skips the next pass", name)
		}
	}
	if _, skipped := (&Records{}).Recall(ctx, nil, k, clockAt(at)); skipped {
		t.Error("an engine without a view skipped a pass")
	}
}

func clockAt(t time.Time) func() time.Time { return func() time.Time { return t } }

// TestARecallWaitingForTheLoadReadsTheClockAfterIt: a replay queued while
// the checkpoint loads judges the record's requeue by the time the load
// ended, not by when it began to wait: a record due meanwhile runs its
// pass; one still holding is replayed.
func TestARecallWaitingForTheLoadReadsTheClockAfterIt(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "settled-load-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	view := &readset.View{Live: env.Client, Scheme: env.Scheme}
	rctx, reads := readset.Start(ctx)
	if err := readset.Reader(env.Client, env.Scheme).Get(rctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	r := &Records{restored: make(chan struct{})}
	k := Key("TerraformCluster", client.ObjectKey{Namespace: ns.Name, Name: "c"})
	r.memos.Store(k, memo{reads: reads.Record(), until: at.Add(time.Minute)})
	var now atomic.Pointer[time.Time]
	now.Store(&at)
	clock := func() time.Time { return *now.Load() }
	done := make(chan bool)
	go func() {
		_, skipped := r.Recall(ctx, view, k, clock)
		done <- skipped
	}()
	select {
	case <-done:
		t.Fatal("a replay did not wait for the checkpoint's load")
	case <-time.After(50 * time.Millisecond):
	}
	later := at.Add(2 * time.Minute) // the load took longer than the requeue
	now.Store(&later)
	close(r.restored)
	if <-done {
		t.Error("a record whose requeue came while the checkpoint loaded was replayed")
	}
	r.memos.Store(k, memo{reads: reads.Record(), until: at.Add(time.Hour)})
	if _, skipped := r.Recall(ctx, view, k, clock); !skipped {
		t.Error("a record that holds, its requeue not come, was not replayed once loaded")
	}
}
