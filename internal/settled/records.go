package settled

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/readset"
)

// Records holds, per object, the record of its last settled pass. Its
// zero value holds none; it is safe for concurrent use and must not be
// copied.
type Records struct {
	// memos holds, per Key, the last settled pass's record.
	memos sync.Map
	// skips counts the passes skipped.
	skips atomic.Int64
	// settling counts, per Key, the passes in a row that found nothing
	// due but wrote, and so looked again soon (settleSoon).
	settling sync.Map
	// restored, when set (a Checkpointer runs), is closed once the
	// checkpoint's records are loaded: a replay waits for it.
	restored chan struct{}
	// restores holds, per Key, the per-object series of a record loaded
	// from the checkpoint and not replayed yet; tombstones the keys
	// forgotten while the checkpoint loaded.
	restores, tombstones sync.Map
	// changed: records changed since the checkpoint was saved.
	changed atomic.Bool
}

// memo is what a settled pass leaves for the next one: everything it
// read, and when its schedule (drift, health, membership) needs it again.
type memo struct {
	reads *readset.Record
	// until is the settled pass's own requeue (zero: only on a change).
	until time.Time
	obj   metrics.Object
}

// Key is the key of an object's record.
func Key(kind string, key client.ObjectKey) string { return kind + "/" + key.String() }

// Skips returns how many passes were skipped over settled objects.
func (r *Records) Skips() int64 { return r.skips.Load() }

// Len returns how many objects have the record of a settled pass.
func (r *Records) Len() int {
	n := 0
	r.memos.Range(func(any, any) bool { n++; return true })
	return n
}

// Recall returns the result of the object's last settled pass when
// everything it read still reads the same in view and its requeue has not
// come by the clock's now, read once a checkpoint being loaded is (the
// load may take a while).
func (r *Records) Recall(ctx context.Context, view *readset.View, k string, clock func() time.Time) (ctrl.Result, bool) {
	if view == nil {
		return ctrl.Result{}, false
	}
	if r.restored != nil {
		select {
		case <-r.restored:
		case <-ctx.Done():
			return ctrl.Result{}, false
		}
	}
	v, ok := r.memos.Load(k)
	if !ok {
		return ctrl.Result{}, false
	}
	m := v.(memo)
	now := clock()
	if (!m.until.IsZero() && !now.Before(m.until)) || !view.Holds(ctx, m.reads) {
		r.Forget(k)
		return ctrl.Result{}, false
	}
	// The first replay of a record loaded from the checkpoint publishes
	// the object's series as the manager that saved it did.
	if s, ok := r.restores.LoadAndDelete(k); ok {
		metrics.Restore(m.obj, s.(map[string]float64))
	}
	r.skips.Add(1)
	ctrl.LoggerFrom(ctx).V(2).Info("Settled and unchanged: pass skipped")
	if m.until.IsZero() {
		return ctrl.Result{}, true
	}
	return ctrl.Result{RequeueAfter: m.until.Sub(now)}, true
}

// Forget drops the record under k, and marks the checkpoint out of date:
// the object's next pass runs in full. While the checkpoint loads, it
// also leaves a tombstone, so that the load does not bring back what was
// forgotten.
func (r *Records) Forget(k string) {
	if r.loading() {
		r.tombstones.Store(k, struct{}{})
	}
	r.restores.Delete(k)
	if _, ok := r.memos.LoadAndDelete(k); ok {
		r.changed.Store(true)
	}
}

// loading tells whether the checkpoint is being loaded.
func (r *Records) loading() bool {
	if r.restored == nil {
		return false
	}
	select {
	case <-r.restored:
		return false
	default:
		return true
	}
}

// Pass is what the engine says of a pass that ran.
type Pass struct {
	// Quiet: the pass found nothing due, no Job runs, and the object is
	// neither deleting nor paused.
	Quiet bool
	// Settled: a quiet pass that bookkept no Job and has nothing to
	// report.
	Settled bool
	// Now is the pass's clock.
	Now time.Time
}

// Remember keeps a settled pass's reads, and forgets any other's; p is
// nil when no pass ran (the object is gone, or not the manager's). It
// starts the metadata caches the replay will read, so that they have
// synced by the next pass. A pass that would have settled but for its
// own writes looks again soon (settleSoon): the result to return says
// when.
func (r *Records) Remember(ctx context.Context, view *readset.View, k string, obj metrics.Object, p *Pass, reads *readset.Set, res ctrl.Result, err error) ctrl.Result {
	if view == nil {
		return res
	}
	if err != nil || p == nil || !p.Quiet || res.Requeue { //nolint:staticcheck // Requeue is still honoured
		// A failed pass leaves the count of looks alone: passes that
		// alternate between failing and writing must not spin either.
		if err == nil {
			r.settling.Delete(k)
		}
		r.Forget(k)
		return res
	}
	if !p.Settled || reads.Wrote() || !reads.Replayable() {
		r.Forget(k)
		return r.settleSoon(k, res)
	}
	r.settling.Delete(k)
	m := memo{reads: reads.Record(), obj: obj}
	if err := view.Warm(m.reads); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Watching the metadata a settled pass read; its next pass runs in full")
		r.Forget(k)
		return res
	}
	if res.RequeueAfter > 0 {
		m.until = p.Now.Add(res.RequeueAfter)
	}
	r.memos.Store(k, m)
	r.changed.Store(true)
	return res
}

// SettleAfter is how soon a pass that found nothing due but wrote looks
// again, and settleTries how many such passes in a row do.
const (
	SettleAfter = 2 * time.Second
	settleTries = 3
)

// settleSoon: a pass that found nothing due but wrote (its status, its
// records, a bookkept Job's marks, an event) leaves no record, since what
// it read is not what it left; and the echo of its own writes wakes no
// pass (internal/echo). Nothing else may wake the object before the next
// resync: until then each wake, a neighbour's change, costs a full pass,
// and a manager restarted meanwhile finds no record of it in the
// checkpoint, so its cold start passes over the object in full. So such a
// pass looks again in SettleAfter: a pass that reads what this one left
// and, finding nothing to do, settles. Passes that look again are counted
// per object, and the settleTries-th in a row that still writes leaves the
// object to its wakes, so that a pass that always writes does not spin.
// The count goes back to zero when a pass settles, or does something
// (not quiet), or finds its object gone; a failed pass leaves it.
func (r *Records) settleSoon(k string, res ctrl.Result) ctrl.Result {
	n := 0
	if v, ok := r.settling.Load(k); ok {
		n = v.(int)
	}
	if n >= settleTries {
		return res
	}
	r.settling.Store(k, n+1)
	if res.RequeueAfter == 0 || res.RequeueAfter > SettleAfter {
		res.RequeueAfter = SettleAfter
	}
	return res
}
