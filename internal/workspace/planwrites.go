package workspace

// The writes of the TerraformPlan lifecycle: a plan made from a Job's
// result, its phase and status moved, the terminal ones pruned.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/runner"
)

// prunePlans deletes terminal plans beyond the newest maxFinishedPlans.
func (p *pass) prunePlans(ctx context.Context) error {
	kept := 0
	for i := range p.plans {
		if live(&p.plans[i]) {
			continue
		}
		if kept++; kept <= maxFinishedPlans {
			continue
		}
		if err := p.e.Client.Delete(ctx, &p.plans[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("pruning TerraformPlan %s: %w", p.plans[i].Name, err)
		}
	}
	return nil
}

// planName is the TerraformPlan of a Job's plan: <target>-<10 hex>.
func planName(target, job, planHash string) string {
	sum := sha256.Sum256([]byte(job + "/" + planHash))
	return target + "-" + hex.EncodeToString(sum[:])[:10]
}

// createPlan turns the plan a Job reported (a blocked apply's, or a
// Manual plan Job's) into a Pending TerraformPlan of reason and
// supersedes the older live one.
func (p *pass) createPlan(ctx context.Context, o outcome, reason infrav1.PlanReason) error {
	// The plan names the Job's hash keyed (bookkeeping may run before the
	// pass made the key).
	if _, err := p.ensurePlanKey(ctx); err != nil {
		return err
	}
	rp := o.result.Plan
	pl := &infrav1.TerraformPlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.obj.GetNamespace(), Name: planName(p.obj.GetName(), o.job.Name, rp.Hash),
			Labels: map[string]string{
				infrav1.PlanPhaseLabel:   string(infrav1.PlanPhasePending),
				infrav1.PlanReasonLabel:  string(reason),
				infrav1.DestructiveLabel: fmt.Sprint(rp.Replace+rp.Delete > 0),
			}},
		Spec: infrav1.TerraformPlanSpec{
			TargetRef:  infrav1.PlanTargetReference{Kind: p.role.Kind(), Name: p.obj.GetName()},
			PlanHash:   rp.Hash,
			InputsHash: p.keyed(planInputsOf(o.job)),
			Reason:     reason,
			Summary:    planSummary(rp),
		},
	}
	if err := controllerutil.SetControllerReference(p.obj, pl, p.e.Client.Scheme()); err != nil {
		return err
	}
	if err := p.e.Client.Create(ctx, pl); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil // made by an earlier pass over the same Job
		}
		return fmt.Errorf("creating TerraformPlan %s: %w", pl.Name, err)
	}
	metrics.ObservePlanApproval(p.role.Kind(), "created")
	if err := p.setPlanStatus(ctx, pl, infrav1.PlanPhasePending); err != nil {
		return err
	}
	for i := range p.plans {
		if old := &p.plans[i]; live(old) && old.Name != pl.Name {
			if changed, err := p.setPlanPhase(ctx, old, infrav1.PlanPhaseSuperseded); err != nil || !changed {
				if err != nil {
					return err
				}
				continue // the next pass supersedes it (one live plan)
			}
			p.eventf(corev1.EventTypeNormal, "PlanSuperseded", "TerraformPlan %s was superseded by %s", old.Name, pl.Name)
		}
	}
	p.plans = append([]infrav1.TerraformPlan{*pl}, p.plans...)
	p.eventf(corev1.EventTypeNormal, "PlanReady", "TerraformPlan %s plans inputs hash %s: %s; approve it with kubectl captf approve %s",
		pl.Name, p.keyed(pl.Spec.InputsHash), summaryCounts(pl.Spec.Summary), p.approveTarget())
	return nil
}

// finishApprovedApply ends the plan an approved apply ran with: Applied
// when it succeeded, Failed when the plan changed. A failed step keeps it
// Approved, for the retry.
func (p *pass) finishApprovedApply(ctx context.Context, o outcome, kind infrav1.RunErrorKind) error {
	name := o.job.Annotations[infrav1.PlanAnnotation]
	if name == "" {
		return nil
	}
	for i := range p.plans {
		pl := &p.plans[i]
		if pl.Name != name || !live(pl) {
			continue
		}
		switch {
		case o.succeeded:
			p.eventf(corev1.EventTypeNormal, "PlanApplied", "Job %s applied TerraformPlan %s", o.job.Name, pl.Name)
			_, err := p.setPlanPhase(ctx, pl, infrav1.PlanPhaseApplied)
			return err
		case kind == infrav1.RunErrorPlanChanged:
			_, err := p.setPlanPhase(ctx, pl, infrav1.PlanPhaseFailed)
			return err
		}
	}
	return nil
}

// setPlanPhase moves a plan to phase: the label (the source of truth for
// terminal phases), then the status. The label is patched against the
// plan as read: when the cache was behind (the plan changed meanwhile),
// nothing is written and changed is false; the next pass decides again
// on the fresh plan.
func (p *pass) setPlanPhase(ctx context.Context, pl *infrav1.TerraformPlan, phase infrav1.PlanPhase) (changed bool, err error) {
	if planPhase(pl) != phase {
		base := pl.DeepCopy()
		patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
		if pl.Labels == nil {
			pl.Labels = map[string]string{}
		}
		pl.Labels[infrav1.PlanPhaseLabel] = string(phase)
		if err := p.e.Client.Patch(ctx, pl, patch); err != nil {
			*pl = *base // the pass goes on with the plan as it was read
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
		changed = true
		if result := strings.ToLower(string(phase)); phase != infrav1.PlanPhasePending {
			metrics.ObservePlanApproval(p.role.Kind(), result)
		}
	}
	return changed, p.setPlanStatus(ctx, pl, phase)
}

// planOutcome is the terminal phase a bookkept apply Job that ran a live
// plan gave it ("" when none did): Applied after a success, Failed after
// a plan-changed result. Bookkeeping sets it; this repairs a transition a
// stale read made it skip.
func (p *pass) planOutcome(pl *infrav1.TerraformPlan) infrav1.PlanPhase {
	for i := range p.jobs {
		j := &p.jobs[i]
		if j.Annotations[infrav1.PlanAnnotation] != pl.Name || j.Annotations[infrav1.BookkeptAnnotation] != "true" {
			continue
		}
		if _, succeeded, _, _ := jobs.Finished(j); succeeded {
			return infrav1.PlanPhaseApplied
		}
		if j.Annotations[infrav1.PlanChangedAnnotation] == "true" {
			return infrav1.PlanPhaseFailed
		}
	}
	return ""
}

// setPlanStatus writes a plan's status: phase, Ready and Approved.
func (p *pass) setPlanStatus(ctx context.Context, pl *infrav1.TerraformPlan, phase infrav1.PlanPhase) error {
	patch := client.MergeFrom(pl.DeepCopy())
	pl.Status.Phase, pl.Status.ObservedGeneration = phase, pl.Generation
	ready := metav1.Condition{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: string(phase), ObservedGeneration: pl.Generation}
	approved := metav1.Condition{Type: infrav1.ApprovedCondition, Status: metav1.ConditionFalse, Reason: infrav1.PlanPendingReason, ObservedGeneration: pl.Generation}
	switch phase {
	case infrav1.PlanPhasePending:
		ready.Message, approved.Message = "The plan waits for approval", "Not approved yet"
	case infrav1.PlanPhaseApproved:
		ready.Message = "Approved; its apply runs with --expect-plan"
	case infrav1.PlanPhaseApplied:
		ready.Message = "The approved apply succeeded"
	case infrav1.PlanPhaseSuperseded:
		ready.Status, ready.Message = metav1.ConditionFalse, "A newer plan replaced it, or the inputs no longer hash to it"
	case infrav1.PlanPhaseFailed:
		ready.Status, ready.Message = metav1.ConditionFalse, "The approved apply planned other changes; nothing was applied"
	}
	switch {
	case planApproved(pl) && phase == infrav1.PlanPhaseSuperseded:
		approved.Reason, approved.Message = infrav1.PlanApprovalIgnoredReason, "Approved by "+pl.Spec.ApprovedBy+", but the plan was superseded before it was applied"
	case planApproved(pl):
		approved.Status, approved.Reason, approved.Message = metav1.ConditionTrue, infrav1.PlanApprovedReason, "Approved by "+pl.Spec.ApprovedBy
	case phase != infrav1.PlanPhasePending:
		approved.Reason, approved.Message = infrav1.PlanNotApprovedReason, "The plan ended without approval"
	}
	meta.SetStatusCondition(&pl.Status.Conditions, ready)
	meta.SetStatusCondition(&pl.Status.Conditions, approved)
	if err := p.e.Client.Status().Patch(ctx, pl, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// planSummary is the TerraformPlan summary of a runner plan summary.
func planSummary(rp *runner.PlanSummary) infrav1.PlanSummary {
	s := rp.Summary
	return infrav1.PlanSummary{
		Create: int32(s.Create), Update: int32(s.Update), Replace: int32(s.Replace), Delete: int32(s.Delete),
		Import: int32(s.Import), Move: int32(s.Move), Forget: int32(s.Forget), OutputChanges: int32(s.OutputChanges),
		Resources: s.Resources, Truncated: s.Truncated,
	}
}

func summaryCounts(s infrav1.PlanSummary) string {
	return fmt.Sprintf("%d to create, %d to update, %d to replace, %d to delete", s.Create, s.Update, s.Replace, s.Delete)
}
