package workspace

import (
	"context"
	"errors"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/evacuation"
	"captf.io/captf/internal/jobs"
)

// evacuating reports whether this deleting object's Jobs run in its
// evacuation namespace: its own is being deleted and the manager may make
// one (package evacuation).
func (p *pass) evacuating() bool { return p.nsTerminating && p.e.Options.Evacuation }

// runNamespace is where the object's Jobs, run lease and state lock live:
// its evacuation namespace once there is one, else its own.
func (p *pass) runNamespace() string {
	if p.evac.ns != nil {
		return p.evac.ns.Name
	}
	return p.obj.GetNamespace()
}

// findEvacuation finds the evacuation namespace an evacuating object
// recorded, before its Jobs are listed.
func (p *pass) findEvacuation(ctx context.Context) error {
	if !p.evacuating() {
		return nil
	}
	var err error
	p.evac.ns, err = evacuation.Find(ctx, p.e.APIReader, p.obj)
	return err
}

// observeEvacuation reads what an evacuating object's first chores do
// once no Job runs: the state an evacuated Job left to copy back to the
// object's namespace (unless a Job the cache does not show yet holds the
// run lease: it may be writing the copy), and an evacuation namespace
// being deleted to let go of.
func (p *pass) observeEvacuation(ctx context.Context) error {
	p.evac.copyBack, p.evac.ending = false, false
	if p.evac.ns == nil || p.active != nil {
		return nil
	}
	if p.evac.ns.Annotations[evacuation.StateCopiedAnnotation] == "true" {
		held, err := p.runLeaseHeld(ctx)
		if err != nil || held {
			return err
		}
		p.evac.copyBack = true
	}
	p.evac.ending = p.evac.ns.DeletionTimestamp != nil
	return nil
}

// evacuationHold is the reason an evacuated state cannot be copied back:
// the chore CopyBackState fails with it, and the object holds.
type evacuationHold struct{ msg string }

func (h *evacuationHold) Error() string { return h.msg }

// copyBack is the chore CopyBackState: it copies the state the evacuated
// Job left back to the object's namespace, before anything reads it. A
// state that grew a piece the terminating namespace cannot take stays in
// the evacuation namespace, and the object holds (evacuationHold). A copy
// that lost its base Secret is not copied back: the object's namespace
// keeps the state it had, and the next Job copies it in again.
func (p *pass) copyBack(ctx context.Context) error {
	changed, err := evacuation.CopyBack(ctx, p.e.client(), p.e.APIReader, p.evac.ns.Name, p.obj.GetNamespace(), p.suffix())
	switch {
	case errors.Is(err, evacuation.ErrCannotGrow):
		return &evacuationHold{fmt.Sprintf("The state the destroy left in the evacuation namespace %s cannot be copied back (%s); it is kept there. ", p.evac.ns.Name, err) +
			p.namespaceTerminatingMessage(decide.OpDestroy)}
	case errors.Is(err, evacuation.ErrNoBase):
		ctrl.LoggerFrom(ctx).Info("The state copy in the evacuation namespace is gone: the object's namespace keeps the state it had, and the next Job copies it in again", "evacuation", p.evac.ns.Name)
		return evacuation.Abandon(ctx, p.e.client(), p.e.APIReader, p.evac.ns)
	case err != nil:
		return fmt.Errorf("copying the state back from the evacuation namespace %s: %w", p.evac.ns.Name, err)
	case changed:
		ctrl.LoggerFrom(ctx).Info("Copied the state back from the evacuation namespace", "evacuation", p.evac.ns.Name)
	}
	return nil
}

// releaseEvacuation is the chore ReleaseEvacuation: it lets go of the
// evacuation namespace being deleted.
func (p *pass) releaseEvacuation(ctx context.Context) error {
	return evacuation.Release(ctx, p.e.client(), p.e.APIReader, p.evac.ns.Name)
}

// prepareEvacuation makes the evacuation namespace of the destroy about to
// start; a message says why it cannot be used yet.
func (p *pass) prepareEvacuation(ctx context.Context) (string, error) {
	ns, msg, err := evacuation.Ensure(ctx, p.e.client(), p.e.APIReader, p.role.Kind(), p.obj)
	if err != nil || msg != "" {
		return msg, err
	}
	if p.evac.ns == nil {
		// No event: the terminating namespace refuses it.
		ctrl.LoggerFrom(ctx).Info("The namespace is being deleted: the destroy runs in the evacuation namespace", "evacuation", ns.Name)
	}
	p.evac.ns = ns
	return "", nil
}

// evacuatedSecrets copies into the evacuation namespace the Secrets the
// destroy's pod reads (its credentials, the policy's env and pull
// secrets); it returns a message naming one it needs that is gone.
func (p *pass) evacuatedSecrets(ctx context.Context) (string, error) {
	needed, optional := p.eff.Policy.Secrets(p.creds.Secret)
	gone, err := evacuation.CopySecrets(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace(), p.evac.ns.Name, needed, optional)
	if err != nil || gone == "" {
		return "", err
	}
	return p.secretGoneMessage(gone), nil
}

// secretGoneMessage says that the Secret name the destroy needs went with
// the namespace, and the way out.
func (p *pass) secretGoneMessage(name string) string {
	return fmt.Sprintf("Secret %s, which the destroy needs, was deleted with namespace %s, so the destroy cannot run in an evacuation namespace either. ",
		name, p.obj.GetNamespace()) + p.namespaceTerminatingMessage(decide.OpDestroy)
}

// runnerAccount is the runner's ServiceAccount: in the evacuation
// namespace, CAPTF's default one (a custom account lives in the object's
// namespace only).
func (p *pass) runnerAccount() string {
	if p.evac.ns != nil {
		return jobs.DefaultServiceAccountName
	}
	return p.eff.Policy.ServiceAccountName
}

// removeEvacuation deletes the object's evacuation namespace, if any, as
// its finalizer goes.
func (p *pass) removeEvacuation(ctx context.Context) error {
	if !p.e.Options.Evacuation {
		return nil
	}
	return evacuation.Remove(ctx, p.e.client(), p.e.APIReader, p.obj)
}

// evacuatedJobs lists the object's Jobs in its evacuation namespace.
func (p *pass) evacuatedJobs(ctx context.Context, list client.ObjectList, labels client.MatchingLabels) error {
	if p.evac.ns == nil {
		return nil
	}
	return p.e.client().List(ctx, list, client.InNamespace(p.evac.ns.Name), labels)
}
