package workspace

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/apierr"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/roles"
)

// afterStep runs the role's after-step on its Cluster API owner: the
// write it wants first, then its conditions and events (a failed write
// fails the pass, which reports nothing of it).
func (p *pass) afterStep(ctx context.Context) error {
	step := p.role.After(p.obj, p.owner)
	p.stepRan(conditions.StepOwnerSync)
	if step.Patch != nil {
		if err := p.e.client().Patch(ctx, step.Patch, client.MergeFrom(step.PatchBase)); err != nil {
			// The step's conditions say the write did not happen, so that a
			// write refused at every pass is visible, not only a stale
			// observedGeneration.
			for _, c := range step.Conditions {
				c.Status = metav1.ConditionUnknown
				c.Message += fmt.Sprintf("; writing %s failed: %s", step.Patch.GetName(), apierr.Reason(err))
				p.set(c)
			}
			return fmt.Errorf("writing the owner %s of the %s: %w", step.Patch.GetName(), p.role.Kind(), err)
		}
		p.owner.Object = step.Patch
	}
	for _, c := range step.Conditions {
		p.set(c)
	}
	p.roleEvents(step.Events)
	return nil
}

// caps are what the object's kind does that the others do not.
func (p *pass) caps() roles.Capabilities { return p.role.Capabilities() }

// roleEvents emits the events a role asked for.
func (p *pass) roleEvents(events []roles.Event) {
	p.events = append(p.events, events...)
}
