package workspace

import (
	"context"
	"fmt"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/guard"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/records"
	"captf.io/captf/pkg/contract"
)

// built are the object's inputs: the records of earlier applies and, when
// they can be built, the current ones.
type built struct {
	attempt, applied *records.Record
	mainTF, tfvars   []byte
	hash             string
	// approval is a pool's approval hash (the inputs hash without
	// bootstrap_data) and exports the SHA-256 of the cluster exports its
	// inputs render.
	approval, exports string
	// held is the exports change a pool holds back (nil when none): the
	// inputs above render the exports of its last successful apply.
	held *guard.Held
	// holdDoc is captf.io/pending-cluster-outputs as it should be (see
	// observeHold); holdDue while the attempt record says otherwise.
	holdDoc string
	holdDue bool
	// tooLarge is set when the rendered root exceeds the cap.
	tooLarge error
	// key is the object's plan key, which keys the hashes (nil while it
	// has none); unsaved while the pass made it and the chore MakePlanKey
	// has not written it yet; ephemeral when it is this pass's only (see
	// writePlanKey).
	key                []byte
	unsaved, ephemeral bool
}

// loadRecords reads the object's input records, live, and makes sure it
// has its plan key, in memory when it had none (the chore MakePlanKey
// writes it): every hash it compares or writes from here on is keyed, a
// provisioned machine's and a deleting object's too.
func (p *pass) loadRecords(ctx context.Context) error {
	var err error
	p.inputs.attempt, p.inputs.applied, err = records.Load(ctx, p.e.APIReader, p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName())
	if err != nil {
		return err
	}
	p.unpullableNow()
	return p.newPlanKey()
}

// buildInputs renders the current inputs of a mutable object, or of an
// immutable one not provisioned yet, and hashes them. What stops them is
// reported on DependenciesReady (or ApplyJobSucceeded for the size cap).
func (p *pass) buildInputs(ctx context.Context) error {
	p.stepRan(conditions.StepInputs)
	prov := p.w.Status.Initialization.Provisioned
	if p.owner.NotReady != nil {
		return nil // nothing to build from: the owner's problem is said (engine.go)
	}
	if !p.role.Mutable() && prov != nil && *prov {
		// Nothing to build: its inputs were rendered once. An owner
		// problem it reported since (engine.go) is over; a True stays as
		// it was said.
		p.set(conditions.DependenciesRendered(p.current(infrav1.DependenciesReadyCondition)))
		return nil
	}
	var recorded []byte
	if p.inputs.attempt != nil {
		recorded = p.inputs.attempt.Tfvars
	}
	ri, cond, err := p.role.Inputs(ctx, rolesReader{Reader: p.e.APIReader, e: p.e}, p.obj, p.owner, recorded)
	if err != nil {
		return fmt.Errorf("gathering the inputs: %w", err)
	}
	if cond != nil {
		p.set(*cond)
		return nil
	}
	vars, err := inputs.ReadVariables(ctx, p.e.APIReader, p.obj.GetNamespace(), p.w.Variables, p.w.VariablesFrom)
	if err != nil {
		return p.inputsFailed(err)
	}
	roleTfvars, err := ri.Tfvars()
	if err != nil {
		return p.inputsFailed(err)
	}
	render := func() (inputs.Rendered, error) {
		return inputs.Render(p.inputs.key, p.role.Contract(), p.w.Source.Image, roleTfvars, vars, p.caps().GuardsExports)
	}
	r, err := render()
	if err != nil {
		return p.inputsFailed(err)
	}
	if h := p.guard().HoldBack(r.Approval, r.Exports); h != nil {
		// The pool keeps rendering the exports of its last successful
		// apply while the change waits for approval.
		if roleTfvars, err = inputs.WithExports(roleTfvars, h.Applied); err != nil {
			return err
		}
		if r, err = render(); err != nil {
			return p.inputsFailed(err)
		}
		p.inputs.held = h
	}
	if err := contract.ValidateInputs(p.role.Contract(), roleTfvars); err != nil {
		return fmt.Errorf("the rendered inputs break the module contract (a CAPTF bug): %w", err)
	}
	p.set(conditions.DependenciesMet)
	metrics.InputsBytes.WithLabelValues(p.role.Kind(), p.obj.GetNamespace(), p.obj.GetName()).Set(float64(inputs.Size(r.MainTF, r.Tfvars)))
	if err := inputs.CheckSize(r.MainTF, r.Tfvars); err != nil {
		p.inputs.tooLarge = err
		return nil
	}
	p.inputs.mainTF, p.inputs.tfvars, p.inputs.hash = r.MainTF, r.Tfvars, r.Hash
	p.inputs.approval, p.inputs.exports = r.Approval, r.Exports
	p.observeHold()
	return nil
}

// inputsFailed reports inputs that cannot be built: a problem of the
// object's configuration, told on DependenciesReady; the pass goes on.
func (p *pass) inputsFailed(err error) error {
	problem, ok := inputs.Problem(err)
	if !ok {
		return err
	}
	p.set(conditions.InputsUnavailable(problem, err.Error()))
	return nil
}
