package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// PlanPath validates TerraformPlan create and update.
const PlanPath = "/validate-infrastructure-cluster-x-k8s-io-v1alpha1-terraformplan"

// PlanValidator guards approvals: an approval names the user who makes it,
// a finished plan cannot be approved, and only the manager moves a plan's
// phase. Who may approve at all is RBAC's: patch on terraformplans.
type PlanValidator struct {
	// ManagerUser is the manager's own username (see ManagerUser).
	ManagerUser string
}

var _ admission.Validator[*infrav1.TerraformPlan] = &PlanValidator{}

func terminal(phase string) bool {
	switch infrav1.PlanPhase(phase) {
	case infrav1.PlanPhaseApplied, infrav1.PlanPhaseSuperseded, infrav1.PlanPhaseFailed:
		return true
	}
	return false
}

func approved(p *infrav1.TerraformPlan) bool { return p.Spec.Approved != nil && *p.Spec.Approved }

func (v *PlanValidator) requester(ctx context.Context) string {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return ""
	}
	return req.UserInfo.Username
}

// ValidateCreate: the manager creates plans; anyone else (clusterctl move)
// creating an approved live plan must name themselves as approver, and may
// set the phase only to Pending (or Approved when approved).
func (v *PlanValidator) ValidateCreate(ctx context.Context, p *infrav1.TerraformPlan) (admission.Warnings, error) {
	user := v.requester(ctx)
	if v.ManagerUser != "" && user == v.ManagerUser {
		return nil, nil
	}
	phase := p.Labels[infrav1.PlanPhaseLabel]
	var errs field.ErrorList
	if approved(p) && !terminal(phase) && p.Spec.ApprovedBy != user {
		errs = append(errs, field.Invalid(field.NewPath("spec", "approvedBy"), p.Spec.ApprovedBy,
			"a plan created approved must name its creator, "+user))
	}
	allowed := phase == "" || phase == string(infrav1.PlanPhasePending) || terminal(phase) ||
		(approved(p) && phase == string(infrav1.PlanPhaseApproved))
	if !allowed {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "labels").Key(infrav1.PlanPhaseLabel), "only the manager sets a plan's phase"))
	}
	return nil, planInvalid(p, errs)
}

// ValidateUpdate: an approval names its requester, is refused on a finished
// plan, and only the manager changes the phase label.
func (v *PlanValidator) ValidateUpdate(ctx context.Context, old, p *infrav1.TerraformPlan) (admission.Warnings, error) {
	user := v.requester(ctx)
	manager := v.ManagerUser != "" && user == v.ManagerUser
	var errs field.ErrorList
	if approved(p) && !approved(old) {
		if oldPhase := old.Labels[infrav1.PlanPhaseLabel]; terminal(oldPhase) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "approved"),
				"TerraformPlan "+p.Name+" is "+oldPhase+" and can no longer be approved; approve the target's current plan (kubectl captf plan <kind>/<name>)"))
		}
		if p.Spec.ApprovedBy != user {
			errs = append(errs, field.Invalid(field.NewPath("spec", "approvedBy"), p.Spec.ApprovedBy,
				"must be the user approving, "+user+" (kubectl captf approve sets it)"))
		}
	}
	if !manager && old.Labels[infrav1.PlanPhaseLabel] != p.Labels[infrav1.PlanPhaseLabel] {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "labels").Key(infrav1.PlanPhaseLabel), "only the manager changes a plan's phase"))
	}
	return nil, planInvalid(p, errs)
}

// ValidateDelete admits every delete.
func (v *PlanValidator) ValidateDelete(context.Context, *infrav1.TerraformPlan) (admission.Warnings, error) {
	return nil, nil
}

func planInvalid(p *infrav1.TerraformPlan, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("TerraformPlan").GroupKind(), p.Name, errs)
}
