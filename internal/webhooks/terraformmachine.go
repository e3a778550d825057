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
type MachineValidator struct {
	// ManagerUser is the manager's own username
	// (system:serviceaccount:<namespace>:<name>), the only one that may set
	// spec.providerID on an existing machine. Empty: nobody may.
	ManagerUser string
}

var _ admission.Validator[*infrav1.TerraformMachine] = &MachineValidator{}

// ValidateCreate checks every rule.
func (v *MachineValidator) ValidateCreate(_ context.Context, m *infrav1.TerraformMachine) (admission.Warnings, error) {
	errs := validateJobs(m.Spec.Jobs, field.NewPath("spec", "jobs"))
	errs = append(errs, validateVariables(contract.RoleMachine, m.Spec.Variables, field.NewPath("spec", "variables"))...)
	return nil, machineInvalid(m, errs)
}

// ValidateUpdate checks the jobs policy when it changed, and that only the
// manager sets spec.providerID (a create may carry it: clusterctl move
// restores it).
func (v *MachineValidator) ValidateUpdate(ctx context.Context, old, m *infrav1.TerraformMachine) (admission.Warnings, error) {
	var errs field.ErrorList
	if jobsChanged(old.Spec.Jobs, m.Spec.Jobs) {
		errs = append(errs, validateJobs(m.Spec.Jobs, field.NewPath("spec", "jobs"))...)
	}
	if old.Spec.ProviderID != m.Spec.ProviderID {
		req, err := admission.RequestFromContext(ctx)
		if err != nil || v.ManagerUser == "" || req.UserInfo.Username != v.ManagerUser {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "providerID"),
				"only the CAPTF manager sets providerID, from the module's provider_id output"))
		}
	}
	return nil, machineInvalid(m, errs)
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
