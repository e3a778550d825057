package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
)

// MachinePoolValidator validates TerraformMachinePools.
type MachinePoolValidator struct {
	RuntimeSwitch
}

var _ admission.Validator[*infrav1.TerraformMachinePool] = &MachinePoolValidator{}

// ValidateCreate checks every rule.
func (v *MachinePoolValidator) ValidateCreate(_ context.Context, m *infrav1.TerraformMachinePool) (admission.Warnings, error) {
	errs := validateJobs(m.Spec.Jobs, field.NewPath("spec", "jobs"))
	errs = append(errs, validateVariables(contract.RoleMachinePool, m.Spec.Variables, field.NewPath("spec", "variables"))...)
	return nil, poolInvalid(m, errs)
}

// ValidateUpdate checks the jobs policy and the variables when they changed.
func (v *MachinePoolValidator) ValidateUpdate(ctx context.Context, old, m *infrav1.TerraformMachinePool) (admission.Warnings, error) {
	var errs field.ErrorList
	if jobsChanged(old.Spec.Jobs, m.Spec.Jobs) {
		errs = append(errs, validateJobs(m.Spec.Jobs, field.NewPath("spec", "jobs"))...)
	}
	if variablesChanged(old.Spec.Variables, m.Spec.Variables) {
		errs = append(errs, validateVariables(contract.RoleMachinePool, m.Spec.Variables, field.NewPath("spec", "variables"))...)
	}
	warnings, errs := v.check(ctx, m.Namespace, m.Spec.Jobs, old.Spec.Source.Image, m.Spec.Source.Image, old.Status.StateBytes, errs)
	return warnings, poolInvalid(m, errs)
}

// ValidateDelete allows every delete.
func (v *MachinePoolValidator) ValidateDelete(context.Context, *infrav1.TerraformMachinePool) (admission.Warnings, error) {
	return nil, nil
}

func poolInvalid(m *infrav1.TerraformMachinePool, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("TerraformMachinePool").GroupKind(), m.Name, errs)
}
