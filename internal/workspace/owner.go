package workspace

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/writecheck"
)

// errOwnerMoved voids a pass: the owner it read from the cache is not the
// one the API server holds, and the pass was about to write after the
// pause gate. The engine runs the pass again, reading the owner live.
var errOwnerMoved = errors.New("the owner changed since the cache showed it")

// lookUpOwner reads the object's owner (its Machine or MachinePool, the
// Cluster and the TerraformCluster), from the cache when the pass may:
//   - a deleting object reads live: its release and retain follow the
//     TerraformCluster's deletion policy as it is now;
//   - a lookup that finds a problem (a pause, an owner missing or
//     mismatched, no TerraformCluster) is made again live: a cache that
//     lags behind a new owner must not hold the object; and the object's
//     next passes read live until a live read finds no problem, so that a
//     cache that has not shown the problem yet never reports it gone;
//   - otherwise the cached owner stands until the pass writes past the
//     pause gate: its first such write confirms the owner live first
//     (armOwnerCheck), so that a pause, a mismatch or a change the cache
//     has not shown yet stops the pass exactly as a live read would.
//
// A pass that writes nothing there (most passes of a provisioned object,
// and every wait) makes no request for its owner.
func (p *pass) lookUpOwner(ctx context.Context, deleting bool) error {
	var err error
	uid := p.obj.GetUID()
	if _, held := p.e.ownerProblems.Load(uid); !p.ownerLive && !deleting && !held {
		if p.owner, err = p.role.Owner(ctx, p.e.Client, p.obj); err == nil && !p.owner.Problem() {
			return nil
		}
	}
	p.ownerLive = true
	if p.owner, err = p.role.Owner(ctx, p.e.APIReader, p.obj); err != nil {
		return err
	}
	// A problem seen live is looked for live until it is gone: a cache
	// that has not shown it yet must not report it gone in between.
	if p.owner.Problem() {
		p.e.ownerProblems.Store(uid, struct{}{})
	} else {
		p.e.ownerProblems.Delete(uid)
	}
	return nil
}

// armOwnerCheck returns the context of the pass's writes past the pause
// gate: the first write through the engine's client confirms a cached
// owner live before it is sent (confirmOwner), and fails with
// errOwnerMoved when the owner changed.
func (p *pass) armOwnerCheck(ctx context.Context) context.Context {
	p.armedEvents, p.pastGate = len(p.events), true
	if p.ownerLive {
		return ctx
	}
	return writecheck.Arm(ctx, p.confirmOwner)
}

// confirmOwner reads the owner live once and compares it with the cached
// one the pass decided on.
func (p *pass) confirmOwner(ctx context.Context) error {
	if p.ownerLive {
		return nil
	}
	live, err := p.role.Owner(ctx, p.e.APIReader, p.obj)
	if err != nil {
		return fmt.Errorf("confirming the owner: %w", err)
	}
	if !live.Same(p.owner) {
		p.ownerMoved = true
		return errOwnerMoved
	}
	p.ownerLive = true
	return nil
}

// client is the engine's client for the writes of a pass: each write
// first runs the owner confirmation its context carries (armOwnerCheck).
// Reads go to the engine's client unchanged. The pass's own status and
// contract-field writes come after run, outside the armed context: the
// engine confirms the owner before them when the pass went past the gate
// (Engine.attempt).
func (e *Engine) client() client.Client { return writecheck.Client(e.Client) }
