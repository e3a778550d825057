package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
)

// ClusterValidator validates TerraformClusters.
type ClusterValidator struct {
	RuntimeSwitch
}

var _ admission.Validator[*infrav1.TerraformCluster] = &ClusterValidator{}

// ValidateCreate checks every rule.
func (v *ClusterValidator) ValidateCreate(_ context.Context, c *infrav1.TerraformCluster) (admission.Warnings, error) {
	errs := clusterJobs(c, nil)
	errs = append(errs, validateVariables(contract.RoleCluster, c.Spec.Variables, field.NewPath("spec", "variables"))...)
	return nil, clusterInvalid(c, errs)
}

// ValidateUpdate checks the jobs policies that changed.
func (v *ClusterValidator) ValidateUpdate(ctx context.Context, oldC, c *infrav1.TerraformCluster) (admission.Warnings, error) {
	errs := clusterJobs(c, oldC)
	if variablesChanged(oldC.Spec.Variables, c.Spec.Variables) {
		errs = append(errs, validateVariables(contract.RoleCluster, c.Spec.Variables, field.NewPath("spec", "variables"))...)
	}
	warnings, errs := v.check(ctx, c.Namespace, c.Spec.Jobs, oldC.Spec.Source.Image, c.Spec.Source.Image, oldC.Status.StateBytes, errs)
	return warnings, clusterInvalid(c, errs)
}

// ValidateDelete allows every delete.
func (v *ClusterValidator) ValidateDelete(context.Context, *infrav1.TerraformCluster) (admission.Warnings, error) {
	return nil, nil
}

// clusterJobs checks spec.jobs and spec.defaults.jobs; with old set, only
// those that changed.
func clusterJobs(c, old *infrav1.TerraformCluster) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if old == nil || jobsChanged(old.Spec.Jobs, c.Spec.Jobs) {
		errs = append(errs, validateJobs(c.Spec.Jobs, spec.Child("jobs"))...)
	}
	newDefaults, oldDefaults := defaultJobs(c), (*infrav1.JobsSpec)(nil)
	if old != nil {
		oldDefaults = defaultJobs(old)
	}
	if old == nil || jobsChanged(oldDefaults, newDefaults) {
		errs = append(errs, validateJobs(newDefaults, spec.Child("defaults", "jobs"))...)
	}
	return errs
}

func defaultJobs(c *infrav1.TerraformCluster) *infrav1.JobsSpec {
	if c.Spec.Defaults == nil {
		return nil
	}
	return c.Spec.Defaults.Jobs
}

func clusterInvalid(c *infrav1.TerraformCluster, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("TerraformCluster").GroupKind(), c.Name, errs)
}
