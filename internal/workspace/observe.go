package workspace

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/custody"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/pkg/state"
)

// jobSelector selects the object's Jobs and their pods (with ownsJob).
func (p *pass) jobSelector() client.MatchingLabels {
	return state.OwnerSelector(p.role.Kind(), p.obj.GetName())
}

// observeJobs lists the object's Jobs (from the cache), in its evacuation
// namespace too, and finds the running one.
func (p *pass) observeJobs(ctx context.Context) error {
	p.vanished.job, p.vanished.podsDone = nil, false
	var list batchv1.JobList
	if err := p.e.client().List(ctx, &list, client.InNamespace(p.obj.GetNamespace()), p.jobSelector()); err != nil {
		return fmt.Errorf("listing the object's Jobs: %w", err)
	}
	var evacuated batchv1.JobList
	if err := p.evacuatedJobs(ctx, &evacuated, p.jobSelector()); err != nil {
		return fmt.Errorf("listing the object's Jobs in its evacuation namespace: %w", err)
	}
	p.jobs = p.jobs[:0]
	for _, j := range append(list.Items, evacuated.Items...) {
		if ownsJob(&j, p.obj) {
			p.jobs = append(p.jobs, j)
		}
	}
	if err := p.catchUp(ctx); err != nil {
		return err
	}
	p.active = nil
	for i := range p.jobs {
		// A Job being deleted still runs until its pods are gone: it stays
		// active, and its disappearance is noticed (observeVanished).
		if finished, _, _, _ := jobs.Finished(&p.jobs[i]); !finished {
			p.active = &p.jobs[i]
		}
	}
	if p.active != nil {
		started := p.active.CreationTimestamp
		p.w.Status.ActiveJob = &infrav1.ActiveJob{Name: p.active.Name, Operation: infrav1.Operation(jobs.Op(p.active)),
			Attempt: int32(jobs.Attempt(p.active)), StartTime: &started}
	} else {
		p.w.Status.ActiveJob = nil
	}
	return nil
}

// catchUp closes the Job cache's lag: a Job status.activeJob names that
// the cache does not list yet is read live, so that a pass never decides
// (or releases the finalizer) as if it did not exist.
func (p *pass) catchUp(ctx context.Context) error {
	aj := p.w.Status.ActiveJob
	if aj == nil {
		return nil
	}
	for i := range p.jobs {
		if p.jobs[i].Name == aj.Name {
			return nil
		}
	}
	j := &batchv1.Job{}
	err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: p.obj.GetNamespace(), Name: aj.Name}, j)
	if apierrors.IsNotFound(err) && p.evac.ns != nil {
		err = p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: p.evac.ns.Name, Name: aj.Name}, j)
	}
	switch {
	case apierrors.IsNotFound(err):
		return p.observeVanished(ctx, aj)
	case err != nil:
		return err
	}
	if ownsJob(j, p.obj) {
		p.jobs = append(p.jobs, *j)
	}
	return nil
}

// stateStatus is what the state read found, for the decision table.
func (p *pass) stateStatus() decide.StateStatus {
	switch {
	case p.stored.retained:
		return decide.StateRetained
	case p.stored.state != nil:
		return decide.StateReadable
	case errors.Is(p.stored.err, state.ErrNotFound):
		return decide.StateAbsent
	}
	return decide.StateUnreadable
}

// stateInputsHash is the captf.io/inputs-hash of the base state Secret,
// rekeyed when an earlier release wrote it.
func (p *pass) stateInputsHash() string {
	if base := p.baseStateSecret(); base != nil {
		return p.keyed(base.Annotations[infrav1.InputsHashAnnotation])
	}
	return ""
}

func (p *pass) baseStateSecret() *corev1.Secret {
	suffix := p.suffix()
	for i := range p.stored.secrets {
		if p.stored.secrets[i].Name == state.SecretName(suffix) {
			return &p.stored.secrets[i]
		}
	}
	return nil
}

func (p *pass) suffix() string {
	s, _ := state.Suffix(p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName())
	return s
}

// observeState reads the state live, reports StateReadable, and maps the
// outputs onto the object. A retained state the object adopts is adopted
// first (the first chore AdoptRetained), then read as the object's own.
func (p *pass) observeState(ctx context.Context) error {
	if err := p.readState(ctx); err != nil || p.retainedFrom() == "" {
		return err
	}
	chores := p.firstChores(decide.Upkeep{AdoptsRetained: p.w.AdoptRetainedState}, true)
	if len(chores) == 0 {
		p.stored.retained = true
		p.set(conditions.StateReadable(conditions.StateFacts{Secret: state.SecretName(p.suffix()), RetainedFrom: p.retainedFrom()}))
		p.stepRan(conditions.StepState)
		return nil
	}
	if err := p.doEach(ctx, chores); err != nil {
		return err
	}
	if err := p.readState(ctx); err != nil {
		return err
	}
	if from := p.retainedFrom(); from != "" {
		return fmt.Errorf("the state Secrets retained by deleted object %s are still labelled %s once adopted", from, infrav1.RetainedFromUIDLabel)
	}
	return nil
}

// readState is observeState's read of the state Secrets; a state
// retained from another object is not read.
func (p *pass) readState(ctx context.Context) error {
	suffix, err := state.Suffix(p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName())
	if err != nil {
		return err
	}
	if p.stored.secrets, p.stored.data, err = p.e.states.List(ctx, p.e.APIReader, p.obj.GetUID(), p.obj.GetNamespace(), suffix); err != nil {
		return err
	}
	if p.retainedFrom() != "" {
		return nil
	}
	p.setAsideSurplus()
	p.stored.state, p.stored.err = p.e.states.Decode(p.obj.GetUID(), suffix, p.stored.secrets, p.stored.data)
	if errors.Is(p.stored.err, custody.ErrStateMoved) {
		return p.stored.err
	}
	p.w.Status.StateSecretSuffix = suffix
	f := conditions.StateFacts{Secret: state.SecretName(suffix), Deleting: !p.obj.GetDeletionTimestamp().IsZero()}
	switch {
	case p.stored.state != nil:
		f.Read, f.Serial, f.Resources, f.CompressedBytes = true, p.stored.state.Serial, p.stored.state.ManagedResources, p.stored.state.CompressedBytes
		p.w.Status.ObservedStateSerial = p.stored.state.Serial
		p.w.Status.StateBytes = p.stored.state.CompressedBytes
		metrics.ObserveState(p.role.Kind(), p.obj.GetNamespace(), p.obj.GetName(), p.stored.state)
		p.applyOutputs()
	case errors.Is(p.stored.err, state.ErrNotFound):
		f.NotFound, f.EverApplied, f.UnconfirmedJob = true, p.everApplied(), p.unconfirmed()
		if c := p.current(infrav1.InfrastructureHealthyCondition); c != nil && c.Reason == infrav1.ProvisioningReason {
			// The first apply ended without a state: nothing provisions now
			// (a new apply says so again when it starts).
			p.set(conditions.NotProvisioned)
		}
	default:
		reason, _ := state.ReasonOf(p.stored.err)
		f.Unreadable = string(reason)
	}
	f.Destroyed = f.Deleting && !f.Read && p.destroyed()
	p.set(conditions.StateReadable(f))
	p.stepRan(conditions.StepState)
	return nil
}

// destroyed: the deleting object's destroy succeeded
// (decide.Snapshot.Destroyed).
func (p *pass) destroyed() bool {
	return decide.Snapshot{Deleting: true, State: p.stateStatus(), History: p.history(), DestroyReportedAt: p.destroyReportedAt()}.Destroyed()
}

// destroyReportedAt is when the status came to say that the object's
// destroy succeeded; zero when it does not.
func (p *pass) destroyReportedAt() time.Time {
	return conditions.DestroyReportedAt(p.current(infrav1.ApplyJobSucceededCondition))
}

// everApplied: provisioned, applied before (the attempt record's marker or
// an applied record), or a backup exists.
func (p *pass) everApplied() bool {
	prov := p.w.Status.Initialization.Provisioned
	return (prov != nil && *prov) || p.inputs.applied != nil || len(p.w.Status.StateBackups) > 0 ||
		(p.inputs.attempt != nil && p.inputs.attempt.Applied)
}

// rolesReader is the engine's API reader for the roles: it also serves a
// TerraformCluster's decoded state to its machines and pools from the
// engine's decode cache (roles.ClusterStateReader), so that their passes
// decompress nothing while the cluster's state is unchanged.
type rolesReader struct {
	client.Reader
	e *Engine
}

// ReadClusterState implements roles.ClusterStateReader.
func (r rolesReader) ReadClusterState(ctx context.Context, tc *infrav1.TerraformCluster, suffix string) (*state.State, error) {
	secrets, withData, err := r.e.states.List(ctx, r.e.APIReader, tc.UID, tc.Namespace, suffix)
	if err != nil {
		return nil, err
	}
	return r.e.states.Decode(tc.UID, suffix, secrets, withData)
}
