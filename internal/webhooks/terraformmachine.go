package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
)

// MachineValidator validates TerraformMachines.
type MachineValidator struct{}

var _ admission.Validator[*infrav1.TerraformMachine] = &MachineValidator{}

// ValidateCreate checks every rule.
func (v *MachineValidator) ValidateCreate(_ context.Context, m *infrav1.TerraformMachine) (admission.Warnings, error) {
	errs := validateJobs(m.Spec.Jobs, field.NewPath("spec", "jobs"))
	errs = append(errs, validateVariables(contract.RoleMachine, m.Spec.Variables, field.NewPath("spec", "variables"))...)
	return nil, machineInvalid(m, errs)
}

// ValidateUpdate checks the jobs policy when it changed.
func (v *MachineValidator) ValidateUpdate(_ context.Context, old, m *infrav1.TerraformMachine) (admission.Warnings, error) {
	if !jobsChanged(old.Spec.Jobs, m.Spec.Jobs) {
		return nil, nil
	}
	return nil, machineInvalid(m, validateJobs(m.Spec.Jobs, field.NewPath("spec", "jobs")))
}

// ValidateDelete allows every delete here; the machine's delete rules are
// another webhook's.
func (v *MachineValidator) ValidateDelete(context.Context, *infrav1.TerraformMachine) (admission.Warnings, error) {
	return nil, nil
}

func machineInvalid(m *infrav1.TerraformMachine, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("TerraformMachine").GroupKind(), m.Name, errs)
}
