package workspace

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
)

// The object's plan key (captf-plankey-<kindshort>-<name>, 32 random
// bytes, never rotated) keys its plan hashes (the runner reads it) and
// its inputs and approval hashes (the manager reads it), so that what a
// reader of its Jobs and TerraformPlans sees confirms no guess of a
// secret input.

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
	s := &corev1.Secret{}
	err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: p.obj.GetNamespace(), Name: p.planKeyName()}, s)
	switch {
	case apierrors.IsNotFound(err):
		p.inputs.key = nil
		return nil
	case err != nil:
		return fmt.Errorf("reading the plan key Secret %s: %w", p.planKeyName(), err)
	}
	key := s.Data[records.PlanKeyData]
	if len(key) < inputs.MinKeyBytes {
		return fmt.Errorf("the plan key Secret %s holds %d bytes under key, it needs %d: delete it and CAPTF makes a new one (the next apply then re-applies unchanged inputs once)",
			p.planKeyName(), len(key), inputs.MinKeyBytes)
	}
	p.inputs.key = key
	return nil
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
// only (ephemeral): it only destroys, and an h2 hash it would key is
// dropped instead (keyed).
//
// A key made for an object being deleted is not protected (and
// protectDeleting leaves plan keys alone): the pass may have read the
// object before another manager's cleanup released it, and a protected
// key made after that release would outlive its owner, held by
// captf.io/state-protection once the garbage collector deletes it, and
// hold its namespace's deletion for ever. Unprotected, it goes with its
// owner; it keys only that object's destroy.
func (p *pass) writePlanKey(ctx context.Context) error {
	if !p.inputs.unsaved {
		return nil
	}
	deleting := !p.obj.GetDeletionTimestamp().IsZero()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.obj.GetNamespace(), Name: p.planKeyName(),
			Labels:          map[string]string{infrav1.ManagedLabel: "true"},
			OwnerReferences: []metav1.OwnerReference{records.OwnerReference(p.obj, p.role.Kind())}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{records.PlanKeyData: p.inputs.key},
	}
	if !deleting {
		protection.Protect(s)
	}
	err := p.e.client().Create(ctx, s)
	switch {
	case apierrors.IsAlreadyExists(err):
		return err
	case apierrors.IsForbidden(err) && deleting:
		p.inputs.ephemeral = true
	case err != nil:
		return fmt.Errorf("creating the plan key Secret %s: %w", p.planKeyName(), err)
	}
	p.inputs.unsaved = false
	return nil
}

// keyedRecord is a copy of rec with its inputs hash keyed (nil for nil).
func (p *pass) keyedRecord(rec *records.Record) *records.Record {
	if rec == nil {
		return nil
	}
	c := *rec
	c.InputsHash = p.keyed(c.InputsHash)
	return &c
}

// keyed is a stored inputs or approval hash in the current scheme (an h2
// digest of an earlier release is rekeyed), for comparing with the
// current ones and for writing. Under an ephemeral key an h2 digest is
// dropped: keyed with it, it would be written where nothing could ever
// match it again, and as it is, it confirms guesses.
func (p *pass) keyed(stored string) string {
	keyed := inputs.Rekey(p.inputs.key, stored)
	if p.inputs.ephemeral && keyed != stored {
		return ""
	}
	return keyed
}
