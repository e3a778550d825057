package approvals

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/metrics"
)

// Writer writes the TerraformPlans of one target kind.
type Writer struct {
	Client client.Client
	// Kind is the target's kind, for the metrics.
	Kind string
}

// Create creates pl, Pending and controlled by target; created is false
// when an earlier pass made it already (same Job, same plan).
func (w Writer) Create(ctx context.Context, target client.Object, pl *infrav1.TerraformPlan) (created bool, err error) {
	if pl.Labels == nil {
		pl.Labels = map[string]string{}
	}
	pl.Labels[infrav1.PlanPhaseLabel] = string(infrav1.PlanPhasePending)
	if err := controllerutil.SetControllerReference(target, pl, w.Client.Scheme()); err != nil {
		return false, err
	}
	if err := w.Client.Create(ctx, pl); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("creating TerraformPlan %s: %w", pl.Name, err)
	}
	metrics.ObservePlanApproval(w.Kind, "created")
	return true, w.SetStatus(ctx, pl, infrav1.PlanPhasePending)
}

// SetPhase moves a plan to phase: the label (the source of truth for
// terminal phases), then the status. The label is patched against the
// plan as read: when the cache was behind (the plan changed meanwhile),
// nothing is written and changed is false; the caller decides again on
// the fresh plan at its next pass.
func (w Writer) SetPhase(ctx context.Context, pl *infrav1.TerraformPlan, phase infrav1.PlanPhase) (changed bool, err error) {
	if Phase(pl) != phase {
		base := pl.DeepCopy()
		patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
		if pl.Labels == nil {
			pl.Labels = map[string]string{}
		}
		pl.Labels[infrav1.PlanPhaseLabel] = string(phase)
		if err := w.Client.Patch(ctx, pl, patch); err != nil {
			*pl = *base // the caller goes on with the plan as it was read
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
		changed = true
		if result := strings.ToLower(string(phase)); phase != infrav1.PlanPhasePending {
			metrics.ObservePlanApproval(w.Kind, result)
		}
	}
	return changed, w.SetStatus(ctx, pl, phase)
}

// SetStatus writes a plan's status: phase, Ready and Approved.
func (w Writer) SetStatus(ctx context.Context, pl *infrav1.TerraformPlan, phase infrav1.PlanPhase) error {
	patch := client.MergeFrom(pl.DeepCopy())
	pl.Status.Phase, pl.Status.ObservedGeneration = phase, pl.Generation
	ready, approved := Conditions(pl, phase)
	meta.SetStatusCondition(&pl.Status.Conditions, ready)
	meta.SetStatusCondition(&pl.Status.Conditions, approved)
	if err := w.Client.Status().Patch(ctx, pl, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// Prune deletes the Prunable plans of plans.
func (w Writer) Prune(ctx context.Context, plans []infrav1.TerraformPlan) error {
	for _, pl := range Prunable(plans) {
		if err := w.Client.Delete(ctx, pl); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("pruning TerraformPlan %s: %w", pl.Name, err)
		}
	}
	return nil
}

// Publish creates pl for target (Create) and, once it is created,
// supersedes every other live plan of plans, in place: one live plan per
// target. created is false when an earlier pass made pl already; nothing
// else is done then. superseded names the plans it superseded, also when
// a later supersession fails; a plan changed meanwhile is left to the
// next pass.
func (w Writer) Publish(ctx context.Context, target client.Object, pl *infrav1.TerraformPlan, plans []infrav1.TerraformPlan) (created bool, superseded []string, err error) {
	if created, err = w.Create(ctx, target, pl); err != nil || !created {
		return created, nil, err
	}
	for i := range plans {
		old := &plans[i]
		if !Live(old) || old.Name == pl.Name {
			continue
		}
		changed, err := w.SetPhase(ctx, old, infrav1.PlanPhaseSuperseded)
		if err != nil {
			return true, superseded, err
		}
		if changed {
			superseded = append(superseded, old.Name)
		}
	}
	return true, superseded, nil
}
