package workspace

import (
	"context"

	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/gates"
	"captf.io/captf/internal/runs"
)

// runs is the writer of the object's Jobs and per-run Secrets.
func (e *Engine) runs() runs.Keeper { return runs.Keeper{Client: e.client(), Reader: e.APIReader} }

// gates is the engine's keeper of the run leases, the cluster operation
// gate and the Job slots.
func (e *Engine) gates() gates.Keeper {
	o := e.Options
	return gates.Keeper{Client: e.client(), Reader: e.APIReader, Options: gates.Options{
		ClusterOperationGate: o.ClusterOperationGate, MaxActiveJobs: o.MaxActiveJobs, ClusterMaxActiveJobs: o.ClusterMaxActiveJobs,
		WatchFilter: o.WatchFilter, HolderGrace: o.HolderGrace, HolderLeaseDuration: o.HolderLeaseDuration,
	}}
}

// subject is the pass's object as the gates see it.
func (p *pass) subject() gates.Subject {
	s := gates.Subject{
		Kind: p.role.Kind(), Namespace: p.obj.GetNamespace(), Name: p.obj.GetName(), ClusterName: p.owner.ClusterName,
		RunNamespace: p.runNamespace(), Evacuated: p.evac.ns != nil, HasDependents: p.caps().Dependents,
		Deadline: p.eff.Policy.ActiveDeadlineSeconds, UID: string(p.obj.GetUID()),
	}
	if tc := p.owner.Infra; tc != nil {
		s.ClusterMaxActiveJobs = tc.Spec.MaxActiveJobs
	}
	return s
}

// runLeaseHeld reports whether a Job holds the object's run lease.
func (p *pass) runLeaseHeld(ctx context.Context) (bool, error) {
	return p.e.gates().RunLeaseHeld(ctx, p.subject(), p.now)
}

// releaseRunLease frees the run lease, and the cluster lease, when jobName
// holds them.
func (p *pass) releaseRunLease(ctx context.Context, jobName string) error {
	return p.e.gates().Release(ctx, p.subject(), jobName)
}

// markLeasesCreated records on the run lease, and the cluster lease its
// Job of op took, that their holder jobName was created.
func (p *pass) markLeasesCreated(ctx context.Context, jobName string, op decide.Operation) {
	p.e.gates().MarkCreated(ctx, p.subject(), jobName, op)
}
