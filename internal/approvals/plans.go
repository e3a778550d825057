package approvals

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/runner/result"
)

// MaxFinished is how many terminal TerraformPlans a target keeps.
const MaxFinished = 10

// Phase is a plan's phase label, the source of truth for terminal phases.
func Phase(pl *infrav1.TerraformPlan) infrav1.PlanPhase {
	return infrav1.PlanPhase(pl.Labels[infrav1.PlanPhaseLabel])
}

// Live: the plan may still be applied (Pending, Approved, or not phased
// yet: made by another writer, such as clusterctl move).
func Live(pl *infrav1.TerraformPlan) bool {
	ph := Phase(pl)
	return ph == infrav1.PlanPhasePending || ph == infrav1.PlanPhaseApproved || ph == ""
}

// Approved: a user approved the plan.
func Approved(pl *infrav1.TerraformPlan) bool {
	return pl.Spec.Approved != nil && *pl.Spec.Approved
}

// Newest is the newest live plan of plans (newest first), nil when none.
func Newest(plans []infrav1.TerraformPlan) *infrav1.TerraformPlan {
	for i := range plans {
		if Live(&plans[i]) {
			return &plans[i]
		}
	}
	return nil
}

// Prunable are the terminal plans of plans (newest first) beyond the
// newest MaxFinished.
func Prunable(plans []infrav1.TerraformPlan) []*infrav1.TerraformPlan {
	var out []*infrav1.TerraformPlan
	kept := 0
	for i := range plans {
		if Live(&plans[i]) {
			continue
		}
		if kept++; kept > MaxFinished {
			out = append(out, &plans[i])
		}
	}
	return out
}

// List lists the TerraformPlans owner controls, newest first, from c.
func List(ctx context.Context, c client.Reader, owner client.Object) ([]infrav1.TerraformPlan, error) {
	var list infrav1.TerraformPlanList
	if err := c.List(ctx, &list, client.InNamespace(owner.GetNamespace())); err != nil {
		return nil, fmt.Errorf("listing the TerraformPlans: %w", err)
	}
	var plans []infrav1.TerraformPlan
	for _, pl := range list.Items {
		if metav1.IsControlledBy(&pl, owner) {
			plans = append(plans, pl)
		}
	}
	sort.Slice(plans, func(i, j int) bool { return plans[i].CreationTimestamp.After(plans[j].CreationTimestamp.Time) })
	return plans, nil
}

// Name is the TerraformPlan of a Job's plan: <target>-<10 hex>.
func Name(target, job, planHash string) string {
	sum := sha256.Sum256([]byte(job + "/" + planHash))
	return target + "-" + hex.EncodeToString(sum[:])[:10]
}

// InputsOf is the hash a plan made by Job j names: a pool's approval
// hash, else the Job's inputs hash.
func InputsOf(j *batchv1.Job) string {
	if h := j.Annotations[infrav1.ApprovalHashAnnotation]; h != "" {
		return h
	}
	return j.Annotations[infrav1.InputsHashAnnotation]
}

// Summary is the TerraformPlan summary of a runner plan summary.
func Summary(rp *result.PlanSummary) infrav1.PlanSummary {
	s := rp.Summary
	return infrav1.PlanSummary{
		Create: int32(s.Create), Update: int32(s.Update), Replace: int32(s.Replace), Delete: int32(s.Delete),
		Import: int32(s.Import), Move: int32(s.Move), Forget: int32(s.Forget), OutputChanges: int32(s.OutputChanges),
		Resources: s.Resources, Truncated: s.Truncated,
	}
}

// Counts says a summary's changes in a sentence's words.
func Counts(s infrav1.PlanSummary) string {
	return fmt.Sprintf("%d to create, %d to update, %d to replace, %d to delete", s.Create, s.Update, s.Replace, s.Delete)
}

// New is the TerraformPlan of the plan rp that Job job of the object
// namespace/target (kind kind) reported, for reason, naming inputsHash
// (InputsOf the Job, keyed): destructive when it replaces or deletes.
func New(namespace, kind, target, job string, rp *result.PlanSummary, reason infrav1.PlanReason, inputsHash string) *infrav1.TerraformPlan {
	return &infrav1.TerraformPlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: Name(target, job, rp.Hash),
			Labels: map[string]string{
				infrav1.PlanReasonLabel:  string(reason),
				infrav1.DestructiveLabel: fmt.Sprint(rp.Replace+rp.Delete > 0),
			}},
		Spec: infrav1.TerraformPlanSpec{
			TargetRef:  infrav1.PlanTargetReference{Kind: kind, Name: target},
			PlanHash:   rp.Hash,
			InputsHash: inputsHash,
			Reason:     reason,
			Summary:    Summary(rp),
		},
	}
}
