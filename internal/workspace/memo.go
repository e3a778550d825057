package workspace

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/checkpoint"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/readset"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/settled"
)

// A settled pass leaves the record of what it read, and the engine skips
// the object's next pass while all of it reads the same (internal/settled
// keeps, replays and checkpoints the records; the engine says which pass
// settled: quiet, settled).

// Skips returns how many passes the engine skipped over settled objects.
func (e *Engine) Skips() int64 { return e.memos.Skips() }

// Settled returns how many objects have the record of a settled pass.
func (e *Engine) Settled() int { return e.memos.Len() }

// recall returns the result of the object's last settled pass when
// everything it read still reads the same and its requeue has not come.
func (e *Engine) recall(ctx context.Context, role roles.Role, key client.ObjectKey) (ctrl.Result, bool) {
	return e.memos.Recall(ctx, e.Memo, settled.Key(role.Kind(), key), e.now)
}

// Forget drops the record of the object's last settled pass: its next
// pass runs in full. A wake that comes from an informer the replay does
// not read (a variablesFrom source's) calls it, as the replay's own cache
// may not hold the change yet.
func (e *Engine) Forget(role roles.Role, key client.ObjectKey) {
	e.memos.Forget(settled.Key(role.Kind(), key))
}

// remember keeps the reads of a pass that settled, and forgets any
// other's (settled.Records.Remember); p is nil when no pass ran.
func (e *Engine) remember(ctx context.Context, role roles.Role, key client.ObjectKey, p *pass, reads *readset.Set, res ctrl.Result, err error) ctrl.Result {
	var said *settled.Pass
	if p != nil {
		said = &settled.Pass{Quiet: p.quiet(), Settled: p.settled(), Now: p.now}
	}
	obj := metrics.Object{Kind: role.Kind(), Namespace: key.Namespace, Name: key.Name}
	return e.memos.Remember(ctx, e.Memo, settled.Key(role.Kind(), key), obj, said, reads, res, err)
}

// NewCheckpointer returns the engine's Checkpointer over store, for the
// manager build build: it keeps the settled passes' records and the live
// reports' records across a restart, fingerprinted with the engine's
// options as they are when it starts. The engine's replays wait for its
// load from then on: run it (it is a manager Runnable, started with the
// leader's controllers).
func (e *Engine) NewCheckpointer(store checkpoint.Store, build string) *settled.Checkpointer {
	c := settled.NewCheckpointer(&e.memos, store, build)
	c.View, c.Reports, c.Now = e.Memo, &e.live, e.now
	c.Config = func() any { return e.Options }
	return c
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
	return p.quiet() && len(p.books.bookkept) == 0 && len(p.events) == 0
}
