package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/crashpoint"
	"captf.io/captf/internal/custody"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/echo"
	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/livereport"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/readset"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/settled"
)

// Engine runs the shared lifecycle of the workload kinds: observe, decide,
// act, status.
type Engine struct {
	// Client reads the cached kinds (ours, Cluster API's, Jobs) and writes.
	Client client.Client
	// APIReader reads live: Secrets (never cached), pods, leases.
	APIReader client.Reader
	// Recorder emits the objects' events.
	Recorder events.EventRecorder
	// Images reads module images' labels: a Job's image whose runtime
	// cannot keep the object's state is held (nil: not checked).
	Images imagemeta.Reader
	// Now is the clock (time.Now when nil).
	Now     func() time.Time
	Options Options

	// waits remembers, per object UID, the wait reason whose event was
	// emitted last, so that a wait's event goes out once even when a pass
	// reads a status the previous pass's patch has not reached yet.
	waits sync.Map
	// live remembers, per object and condition type, the record a live
	// report covers, to say again once the report ends (live.go), and
	// whether it changed since the checkpoint saved it.
	live livereport.Store
	// states holds, per object UID, the newest decoded state: a pass whose
	// state Secrets have the same names and resourceVersions reuses it
	// instead of decompressing again (custody.States).
	states custody.States

	// Memo, when set, replays what a settled object's last pass read and
	// skips the pass while all of it reads the same (internal/settled).
	// Client and APIReader must then record reads (readset.Client,
	// readset.Reader).
	Memo *readset.View
	// Filter holds what the engine expects of the watch events of its own
	// writes, which the workload controllers drop (internal/echo).
	echo.Filter
	// ownerProblems holds the UIDs of the objects whose last owner lookup,
	// live, found a problem (owner.go).
	ownerProblems sync.Map
	// memos holds the records of settled passes, which Reconcile replays
	// to skip a pass (memo.go, internal/settled).
	memos settled.Records
}

// Decodes returns how many states the engine has decompressed.
func (e *Engine) Decodes() int64 { return e.states.Decodes() }

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Reconcile runs one pass over the object key of role's kind, unless the
// object is settled and nothing its last pass read has changed since.
func (e *Engine) Reconcile(ctx context.Context, role roles.Role, key client.ObjectKey) (ctrl.Result, error) {
	if res, ok := e.recall(ctx, role, key); ok {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return ctrl.Result{}, err // the manager stops
	}
	var reads *readset.Set
	if e.Memo != nil {
		ctx, reads = readset.Start(ctx)
	}
	p, res, err := e.reconcile(ctx, role, key)
	return e.remember(ctx, role, key, p, reads, res, err), err
}

// reconcile is one pass; p is nil when no pass ran (the object is gone,
// another shard's or externally managed). A pass that read its owner from
// the cache and found, at its first write past the pause gate, that the
// API server holds another owner is void: it writes no status and emits
// nothing of what came after its gate, as if the manager had stopped
// there, and the pass runs again at once with its owner read live.
func (e *Engine) reconcile(ctx context.Context, role roles.Role, key client.ObjectKey) (*pass, ctrl.Result, error) {
	p, res, err := e.attempt(ctx, role, key, false, nil)
	if p != nil && p.ownerMoved {
		// The void pass's writes before its gate stand, and so do their
		// events: the pass again, redoing what was not marked done,
		// does not emit them twice.
		p, res, err = e.attempt(ctx, role, key, true, p.events)
	}
	return p, res, err
}

// attempt is one pass, its owner read live when ownerLive (else as
// lookUpOwner chooses); emitted are the events a void pass over the object
// emitted just before.
func (e *Engine) attempt(ctx context.Context, role roles.Role, key client.ObjectKey, ownerLive bool, emitted []conditions.Event) (*pass, ctrl.Result, error) {
	obj := role.New()
	// Read live, not from the cache: a pass that starts from a status older
	// than the one the previous pass wrote would write that older status
	// back (the merge patch replaces the whole conditions list), undoing a
	// report that only a transition makes, such as a withdrawn block.
	if err := e.APIReader.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			// Its series go, also when another manager released it. The
			// Jobs a release left without an owner reference (the
			// manager stopped before deleting them) go: the Job watch
			// brings them here at every start; their
			// ttlSecondsAfterFinished is only the last resort.
			metrics.Forget(role.Kind(), key.Namespace, key.Name)
			return nil, ctrl.Result{}, e.runs().SweepOrphans(ctx, role.Kind(), key, e.Options.WatchFilter, role.New())
		}
		return nil, ctrl.Result{}, err
	}
	if e.Options.WatchFilter != "" && obj.GetLabels()[infrav1.WatchFilterLabel] != e.Options.WatchFilter {
		return nil, ctrl.Result{}, nil // another manager's shard: not even read further
	}
	p := &pass{e: e, role: role, obj: obj, w: role.View(obj), before: obj.DeepCopyObject().(client.Object), now: e.now(), read: obj.GetResourceVersion(),
		ownerLive: ownerLive, emitted: slices.Clone(emitted)}
	if roles.IsExternallyManaged(obj) {
		return nil, ctrl.Result{}, p.releaseExternallyManaged(ctx)
	}
	res, err := p.run(ctx)
	err = p.choresAfter(ctx, err)
	if p.pastGate && p.specChanged && !p.ownerMoved {
		// The contract fields the pass writes with its status are a write
		// past the gate too.
		if cerr := p.confirmOwner(ctx); cerr != nil && !p.ownerMoved {
			return p, ctrl.Result{}, cerr
		}
	}
	if p.ownerMoved {
		p.voidEvents()
		return p, ctrl.Result{}, err
	}
	if perr := p.patchStatus(ctx, err == nil); perr != nil {
		return p, ctrl.Result{}, perr
	}
	for _, f := range p.observations {
		f()
	}
	if p.released {
		// The object is gone: its series go too (the Job counters stay).
		metrics.Forget(p.role.Kind(), p.obj.GetNamespace(), p.obj.GetName())
		e.Gone(p.obj)
	}
	p.emit()
	if err != nil {
		return p, ctrl.Result{}, err
	}
	if len(p.books.bookkept) > 0 {
		crashpoint.Hit(crashpoint.AfterStatusPatch)
	}
	if err := p.markBookkept(ctx); err != nil {
		return p, ctrl.Result{}, err
	}
	return p, res, nil
}

// run is the pass up to its status: it enters (owner, finalizer),
// tends the Jobs (tendJobs: bookkeeping and the first chores, done even
// while paused), then, past the owner gate, observes the records,
// state and inputs, decides and acts.
func (p *pass) run(ctx context.Context) (ctrl.Result, error) {
	deleting := !p.obj.GetDeletionTimestamp().IsZero()
	if res, in, err := p.enter(ctx, deleting); err != nil || !in {
		return res, err
	}
	if res, held, err := p.tendJobs(ctx, deleting); err != nil || held {
		return res, err
	}
	p.clearBlockMove()
	// Paused: everything above writes even so (docs/concepts/lifecycle.md,
	// Pause): a finished Job's outcome lives only as long as the Job, a
	// stuck Job must go, and clusterctl move pauses the Cluster and then
	// waits for block-move to clear. Below, a paused pass prunes the Jobs
	// (its one chore) and records approvals; it decides nothing.
	if p.owner.Paused {
		// Bookkeeping only: approvals are recorded and
		// status.pendingPlanRef follows the live plan.
		p.movePlans(true)
		if err := p.doChores(ctx, decide.Chores(p.undecidedSnapshot())); err != nil {
			return ctrl.Result{}, err
		}
		if released, err := p.releaseOwnerless(ctx, deleting); released || err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: p.e.Options.timing().ActiveJob}, nil
	}
	// Past the gate, a write needs the owner as the API server holds it.
	ctx = p.armOwnerCheck(ctx)
	if err := p.observePastGate(ctx, deleting); err != nil {
		return ctrl.Result{}, err
	}
	p.movePlans(deleting)
	return p.decideAndAct(ctx, deleting)
}

// enter looks up the owner, resolves the effective settings, says the
// lifecycle conditions and goes through the door decide.Enter picks: in,
// the pass goes on; else res says when to look again (the finalizer added
// brings the next pass by its own watch event).
func (p *pass) enter(ctx context.Context, deleting bool) (res ctrl.Result, in bool, err error) {
	if err := p.lookUpOwner(ctx, deleting); err != nil {
		return ctrl.Result{}, false, fmt.Errorf("looking up the owner: %w", err)
	}
	p.eff = roles.Resolve(p.role.Kind(), p.w, p.owner.Infra, p.e.Options.DriftDefault)
	for _, c := range conditions.Lifecycle(deleting, p.owner.Paused) {
		p.set(c)
	}
	p.stepRan(conditions.StepLifecycle)
	if p.owner.NotReady != nil {
		p.set(*p.owner.NotReady)
	}
	door, after := decide.Enter(decide.Entry{Deleting: deleting, OwnerNotReady: p.owner.NotReady != nil,
		HasFinalizer: controllerutil.ContainsFinalizer(p.obj, p.role.Finalizer())}, p.e.Options.Timing)
	switch door {
	case decide.DoorWaitForOwner, decide.DoorLeave:
		return ctrl.Result{RequeueAfter: after}, false, nil
	case decide.DoorAddFinalizer:
		patch := client.MergeFrom(p.obj.DeepCopyObject().(client.Object))
		controllerutil.AddFinalizer(p.obj, p.role.Finalizer())
		if err := p.e.client().Patch(ctx, p.obj, patch); err != nil {
			return ctrl.Result{}, false, err
		}
		// The patch's watch event brings the next pass.
		p.before = p.obj.DeepCopyObject().(client.Object)
		return ctrl.Result{}, false, nil
	}
	return ctrl.Result{}, true, nil
}

// tendJobs observes the object's Jobs and does the first chores each
// observation chooses, as soon as it is read: a vanished Job's record and
// run lease; the state an evacuated Job left, copied back; then
// bookkeeping's records and adopted state (the plans it writes change in
// the pass's memory). What the pass observes after reads what they wrote.
// It ends with the running Job checked (stuck, unpullable) and its live
// reports said again. held: an evacuated state cannot be copied back, and
// res holds the object.
func (p *pass) tendJobs(ctx context.Context, deleting bool) (res ctrl.Result, held bool, err error) {
	if deleting {
		// A namespace being deleted takes no new Job: read first, a
		// destroy may run elsewhere.
		if p.nsTerminating, err = p.namespaceTerminating(ctx); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	if err := p.findEvacuation(ctx); err != nil {
		return ctrl.Result{}, false, err
	}
	if err := p.observeJobs(ctx); err != nil {
		return ctrl.Result{}, false, err
	}
	if err := p.doFirstChores(ctx, decide.Upkeep{VanishedJob: p.vanished.job != nil}); err != nil {
		return ctrl.Result{}, false, err
	}
	if err := p.observeEvacuation(ctx); err != nil {
		return ctrl.Result{}, false, err
	}
	if err := p.doFirstChores(ctx, decide.Upkeep{EvacuatedCopy: p.evac.copyBack, EvacuationEnding: p.evac.ending}); err != nil {
		var hold *evacuationHold
		if errors.As(err, &hold) {
			res, err := p.stopped(decide.Decision{}, decide.ObstacleEvacuationHeld, hold.msg)
			return res, true, err
		}
		return ctrl.Result{}, false, err
	}
	if err := p.observePlans(ctx); err != nil {
		return ctrl.Result{}, false, err
	}
	// Bookkeeping compares and writes hashes: the key first.
	if err := p.loadKey(ctx); err != nil {
		return ctrl.Result{}, false, err
	}
	if err := p.readOutcomes(ctx); err != nil {
		return ctrl.Result{}, false, err
	}
	if err := p.doFirstChores(ctx, decide.Upkeep{Unbookkept: len(p.books.outcomes)}); err != nil {
		return ctrl.Result{}, false, err
	}
	if p.active != nil {
		if err := p.checkActive(ctx); err != nil {
			return ctrl.Result{}, false, err
		}
		p.sayRunning()
	}
	return ctrl.Result{}, false, nil
}

// observePastGate reads, past the owner gate, the records (and a
// confirmation that an unconfirmed apply created nothing), then, no Job
// running, the state, its lock and a restore request (a running Job may be
// writing the state: it is read once the Job is bookkept; only a lock
// another holds is looked at), and the inputs.
func (p *pass) observePastGate(ctx context.Context, deleting bool) error {
	if err := p.loadRecords(ctx); err != nil {
		return err
	}
	p.confirmNoResources(ctx)
	if p.active == nil {
		if err := p.observeState(ctx); err != nil {
			return err
		}
		if err := p.checkLock(ctx); err != nil {
			return err
		}
		if err := p.restoreRequest(ctx); err != nil {
			return err
		}
	} else if err := p.checkForeignLock(ctx); err != nil {
		return err
	}
	// A deleting object renders its records; a mutable one falls back to
	// its current inputs when it has none.
	if !deleting || p.role.Mutable() {
		return p.buildInputs(ctx)
	}
	return nil
}

// releaseExternallyManaged leaves an object another controller manages
// alone; a deleting one only loses CAPTF's finalizer.
func (p *pass) releaseExternallyManaged(ctx context.Context) error {
	if p.obj.GetDeletionTimestamp().IsZero() || !controllerutil.ContainsFinalizer(p.obj, p.role.Finalizer()) {
		return nil
	}
	patch := client.MergeFrom(p.obj.DeepCopyObject().(client.Object))
	controllerutil.RemoveFinalizer(p.obj, p.role.Finalizer())
	if err := p.e.client().Patch(ctx, p.obj, patch); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	p.waitOver()
	p.e.states.Forget(p.obj.GetUID())
	p.e.Recorder.Eventf(p.obj, nil, corev1.EventTypeNormal, "ExternallyManagedReleased", "Release",
		"Removed the CAPTF finalizer of an externally managed object; its state and infrastructure are left alone")
	return nil
}
