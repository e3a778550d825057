package workspace

import (
	"context"
	"crypto/rand"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"captf.io/captf/internal/guard"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/records"
)

// The object's plan key keys its hashes (internal/custody reads and
// writes it); the pass makes one in its memory when it has none, and the
// chore MakePlanKey writes it before anything keyed leaves the pass.

// planKeyName is the object's plan key Secret.
func (p *pass) planKeyName() string {
	return records.PlanKeyName(p.role.Kind(), p.obj.GetName())
}

// loadKey reads the object's plan key, live, once a pass; it stays nil
// when there is none yet.
func (p *pass) loadKey(ctx context.Context) error {
	if p.inputs.key != nil {
		return nil
	}
	var err error
	p.inputs.key, err = p.custody().ReadPlanKey(ctx, p.obj, p.role.Kind())
	return err
}

// newPlanKey gives an object that has none a plan key in the pass's
// memory (unsaved): the pass keys its hashes with it, and the chore
// MakePlanKey writes it before anything keyed leaves the pass. A deleting
// object whose namespace is being deleted (it takes no new Secret) keeps
// it for the pass only (ephemeral; see writePlanKey), known before any
// hash is keyed.
func (p *pass) newPlanKey() error {
	if p.inputs.key != nil {
		return nil
	}
	key := make([]byte, inputs.MinKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	p.inputs.key = key
	if p.nsTerminating && !p.obj.GetDeletionTimestamp().IsZero() {
		p.inputs.ephemeral = true
		return nil
	}
	p.inputs.unsaved = true
	return nil
}

// savePlanKey is the chore MakePlanKey. A key another pass wrote since
// this one read none fails the pass: its hashes are keyed with its own.
func (p *pass) savePlanKey(ctx context.Context) error {
	err := p.writePlanKey(ctx)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("the plan key Secret %s was made since this pass read none: the next pass keys its hashes with it", p.planKeyName())
	}
	return err
}

// ensurePlanKey makes sure the object has its plan key, written, and
// returns the Secret's name: for the plans bookkeeping writes, before
// the pass made one in memory (a key made meanwhile is read and keys),
// and for a guarded Job's start (the chore MakePlanKey wrote it by then).
// A key it could not write is forgotten: nothing was keyed with it.
func (p *pass) ensurePlanKey(ctx context.Context) (string, error) {
	if err := p.newPlanKey(); err != nil {
		return "", err
	}
	err := p.writePlanKey(ctx)
	if err != nil && p.inputs.unsaved {
		p.inputs.key, p.inputs.unsaved = nil, false
	}
	if apierrors.IsAlreadyExists(err) {
		err = p.loadKey(ctx)
	}
	return p.planKeyName(), err
}

// writePlanKey writes the unsaved key. In a namespace being deleted,
// which takes no new Secret, a deleting object keeps it for this pass
// only (ephemeral, custody.Keeper.WritePlanKey): it only destroys, and an
// h2 hash it would key is dropped instead (keyed).
func (p *pass) writePlanKey(ctx context.Context) error {
	if !p.inputs.unsaved {
		return nil
	}
	ephemeral, err := p.custody().WritePlanKey(ctx, p.obj, p.role.Kind(), p.inputs.key)
	if err != nil {
		return err
	}
	p.inputs.ephemeral = p.inputs.ephemeral || ephemeral
	p.inputs.unsaved = false
	return nil
}

// keying keys stored hashes with the object's plan key (guard.Keying).
func (p *pass) keying() guard.Keying {
	return guard.Keying{Key: p.inputs.key, Ephemeral: p.inputs.ephemeral}
}

// keyed is a stored inputs or approval hash in the current scheme
// (guard.Keying.Keyed).
func (p *pass) keyed(stored string) string { return p.keying().Keyed(stored) }
