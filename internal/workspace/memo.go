package workspace

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/readset"
	"captf.io/captf/internal/roles"
)

// memo is what a settled pass leaves for the next one: everything it read,
// and when its schedule (drift, health, membership) needs it again.
//
// A pass is a function of what it reads and of the clock. A settled pass
// (nothing due, no Job, nothing written, no event) over the same reads
// before its own requeue would decide the same and write nothing again, so
// the engine skips it: a resync, or a wake for a neighbour's change, then
// costs a replay of those reads against the caches instead of a dozen live
// reads. The replay compares resourceVersions in the informers, which the
// event that wakes a pass has already reached; a Secret or Lease, which no
// controller watches, is compared in a metadata cache of the namespaces
// settled passes read (started when the first record reads there), so a
// resync still sees a rotated credential or a changed bootstrap Secret
// (docs/reference/manager-flags.md, --sync-period).
type memo struct {
	reads *readset.Record
	// until is the settled pass's own requeue (zero: only on a change).
	until time.Time
	obj   metrics.Object
}

func memoKey(role roles.Role, key client.ObjectKey) string { return role.Kind() + "/" + key.String() }

// Skips returns how many passes the engine skipped over settled objects.
func (e *Engine) Skips() int64 { return e.skips.Load() }

// Settled returns how many objects have the record of a settled pass.
func (e *Engine) Settled() int {
	n := 0
	e.memos.Range(func(any, any) bool { n++; return true })
	return n
}

// recall returns the result of the object's last settled pass when
// everything it read still reads the same and its requeue has not come.
func (e *Engine) recall(ctx context.Context, role roles.Role, key client.ObjectKey) (ctrl.Result, bool) {
	if e.Memo == nil {
		return ctrl.Result{}, false
	}
	if e.restored != nil {
		select {
		case <-e.restored:
		case <-ctx.Done():
			return ctrl.Result{}, false
		}
	}
	k := memoKey(role, key)
	v, ok := e.memos.Load(k)
	if !ok {
		return ctrl.Result{}, false
	}
	m := v.(memo)
	now := e.now()
	if (!m.until.IsZero() && !now.Before(m.until)) || !e.Memo.Holds(ctx, m.reads) {
		e.forget(k)
		return ctrl.Result{}, false
	}
	// The first replay of a record loaded from the checkpoint publishes
	// the object's series as the manager that saved it did.
	if r, ok := e.restores.LoadAndDelete(k); ok {
		metrics.Restore(m.obj, r.(map[string]float64))
	}
	e.skips.Add(1)
	ctrl.LoggerFrom(ctx).V(2).Info("Settled and unchanged: pass skipped")
	if m.until.IsZero() {
		return ctrl.Result{}, true
	}
	return ctrl.Result{RequeueAfter: m.until.Sub(now)}, true
}

// Forget drops the record of the object's last settled pass: its next
// pass runs in full. A wake that comes from an informer the replay does
// not read (a variablesFrom source's) calls it, as the replay's own cache
// may not hold the change yet.
func (e *Engine) Forget(role roles.Role, key client.ObjectKey) {
	e.forget(memoKey(role, key))
}

// forget drops the record under k, and marks the checkpoint out of date.
// While the checkpoint loads, it also leaves a tombstone, so that the load
// does not bring back what was forgotten.
func (e *Engine) forget(k string) {
	if e.loading() {
		e.tombstones.Store(k, struct{}{})
	}
	e.restores.Delete(k)
	if _, ok := e.memos.LoadAndDelete(k); ok {
		e.memoChanged.Store(true)
	}
}

// loading tells whether the checkpoint is being loaded.
func (e *Engine) loading() bool {
	if e.restored == nil {
		return false
	}
	select {
	case <-e.restored:
		return false
	default:
		return true
	}
}

// remember keeps a settled pass's reads, and forgets any other's. It
// starts the metadata caches the replay will read, so that they have
// synced by the next pass. A pass that would have settled but for its own
// writes looks again soon (settleSoon): the result to return says when.
func (e *Engine) remember(ctx context.Context, role roles.Role, key client.ObjectKey, p *pass, reads *readset.Set, res ctrl.Result, err error) ctrl.Result {
	if e.Memo == nil {
		return res
	}
	k := memoKey(role, key)
	if err != nil || p == nil || !p.quiet() || res.Requeue { //nolint:staticcheck // Requeue is still honoured
		// A failed pass leaves the count of looks alone: passes that
		// alternate between failing and writing must not spin either.
		if err == nil {
			e.settling.Delete(k)
		}
		e.forget(k)
		return res
	}
	if !p.settled() || reads.Wrote() || !reads.Replayable() {
		e.forget(k)
		return e.settleSoon(k, res)
	}
	e.settling.Delete(k)
	m := memo{reads: reads.Record(), obj: metrics.Object{Kind: role.Kind(), Namespace: key.Namespace, Name: key.Name}}
	if err := e.Memo.Warm(m.reads); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Watching the metadata a settled pass read; its next pass runs in full")
		e.forget(k)
		return res
	}
	if res.RequeueAfter > 0 {
		m.until = p.now.Add(res.RequeueAfter)
	}
	e.memos.Store(k, m)
	e.memoChanged.Store(true)
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
func (e *Engine) settleSoon(k string, res ctrl.Result) ctrl.Result {
	n := 0
	if v, ok := e.settling.Load(k); ok {
		n = v.(int)
	}
	if n >= settleTries {
		return res
	}
	e.settling.Store(k, n+1)
	if res.RequeueAfter == 0 || res.RequeueAfter > SettleAfter {
		res.RequeueAfter = SettleAfter
	}
	return res
}

// quiet: the pass found nothing due (UpToDate), no Job runs, and the
// object is neither deleting nor paused.
func (p *pass) quiet() bool {
	d := p.decided
	return d != nil && d.Action == decide.ActionWait && d.Reason == decide.ReasonUpToDate &&
		p.active == nil && !p.released && p.obj.GetDeletionTimestamp().IsZero() && !p.owner.Paused
}

// settled: a quiet pass that bookkept no Job and has nothing to report.
func (p *pass) settled() bool {
	return p.quiet() && len(p.bookkept) == 0 && len(p.events) == 0
}
