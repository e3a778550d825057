package webhooks

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
)

// TopologyDryRunAnnotation marks the dry-run requests Cluster API's topology
// controller sends to compute changes; they are exempt from immutability.
const TopologyDryRunAnnotation = "topology.cluster.x-k8s.io/dry-run"

// Paths of the template validators; config/webhook names them.
const (
	ClusterTemplatePath     = "/validate-infrastructure-cluster-x-k8s-io-v1alpha1-terraformclustertemplate"
	MachineTemplatePath     = "/validate-infrastructure-cluster-x-k8s-io-v1alpha1-terraformmachinetemplate"
	MachinePoolTemplatePath = "/validate-infrastructure-cluster-x-k8s-io-v1alpha1-terraformmachinepooltemplate"
)

// template is what the rules need of a template.
type template struct {
	kind string
	role contract.Role
	meta metav1.Object
	spec any // spec.template.spec
	jobs *infrav1.JobsSpec
	vars *apiextensionsv1.JSON
}

// templateRules checks a template on create (its stamped spec's jobs and
// variables) and on update (spec.template.spec is immutable, except for a
// ClusterClass topology dry-run). Deletes are always admitted.
func templateRules(ctx context.Context, old *template, t template) error {
	path := field.NewPath("spec", "template", "spec")
	var errs field.ErrorList
	switch {
	case old == nil:
		errs = append(errs, validateJobs(t.jobs, path.Child("jobs"))...)
		errs = append(errs, validateVariables(t.role, t.vars, path.Child("variables"))...)
	case !equality.Semantic.DeepEqual(old.spec, t.spec) && !topologyDryRun(ctx, t.meta.GetAnnotations()):
		errs = append(errs, field.Forbidden(path, t.kind+" spec.template.spec is immutable: create a new template and point its users at it"))
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: infrav1.GroupVersion.Group, Kind: t.kind}, t.meta.GetName(), errs)
}

func topologyDryRun(ctx context.Context, annotations map[string]string) bool {
	req, err := admission.RequestFromContext(ctx)
	if err != nil || req.DryRun == nil || !*req.DryRun {
		return false
	}
	_, ok := annotations[TopologyDryRunAnnotation]
	return ok
}

// ClusterTemplateValidator validates TerraformClusterTemplates.
type ClusterTemplateValidator struct{}

func clusterTemplate(o *infrav1.TerraformClusterTemplate) template {
	s := &o.Spec.Template.Spec
	return template{kind: "TerraformClusterTemplate", role: contract.RoleCluster, meta: o, spec: *s, jobs: s.Jobs, vars: s.Variables}
}

// ValidateCreate checks the stamped spec.
func (ClusterTemplateValidator) ValidateCreate(ctx context.Context, o *infrav1.TerraformClusterTemplate) (admission.Warnings, error) {
	var warnings admission.Warnings
	if o.Spec.Template.Spec.IdentityRef == nil {
		warnings = append(warnings, "spec.template.spec.identityRef is unset: clusters stamped from this template are refused unless a ClusterClass patch sets it")
	}
	return warnings, templateRules(ctx, nil, clusterTemplate(o))
}

// ValidateUpdate keeps spec.template.spec immutable.
func (ClusterTemplateValidator) ValidateUpdate(ctx context.Context, old, o *infrav1.TerraformClusterTemplate) (admission.Warnings, error) {
	prev := clusterTemplate(old)
	return nil, templateRules(ctx, &prev, clusterTemplate(o))
}

// ValidateDelete admits every delete.
func (ClusterTemplateValidator) ValidateDelete(context.Context, *infrav1.TerraformClusterTemplate) (admission.Warnings, error) {
	return nil, nil
}

// MachineTemplateValidator validates TerraformMachineTemplates.
type MachineTemplateValidator struct{}

func machineTemplate(o *infrav1.TerraformMachineTemplate) template {
	s := &o.Spec.Template.Spec
	return template{kind: "TerraformMachineTemplate", role: contract.RoleMachine, meta: o, spec: *s, jobs: s.Jobs, vars: s.Variables}
}

// ValidateCreate checks the stamped spec.
func (MachineTemplateValidator) ValidateCreate(ctx context.Context, o *infrav1.TerraformMachineTemplate) (admission.Warnings, error) {
	return nil, templateRules(ctx, nil, machineTemplate(o))
}

// ValidateUpdate keeps spec.template.spec immutable (spec.capacity stays
// mutable).
func (MachineTemplateValidator) ValidateUpdate(ctx context.Context, old, o *infrav1.TerraformMachineTemplate) (admission.Warnings, error) {
	prev := machineTemplate(old)
	return nil, templateRules(ctx, &prev, machineTemplate(o))
}

// ValidateDelete admits every delete.
func (MachineTemplateValidator) ValidateDelete(context.Context, *infrav1.TerraformMachineTemplate) (admission.Warnings, error) {
	return nil, nil
}

// MachinePoolTemplateValidator validates TerraformMachinePoolTemplates.
type MachinePoolTemplateValidator struct{}

func poolTemplate(o *infrav1.TerraformMachinePoolTemplate) template {
	s := &o.Spec.Template.Spec
	return template{kind: "TerraformMachinePoolTemplate", role: contract.RoleMachinePool, meta: o, spec: *s, jobs: s.Jobs, vars: s.Variables}
}

// ValidateCreate checks the stamped spec.
func (MachinePoolTemplateValidator) ValidateCreate(ctx context.Context, o *infrav1.TerraformMachinePoolTemplate) (admission.Warnings, error) {
	return nil, templateRules(ctx, nil, poolTemplate(o))
}

// ValidateUpdate keeps spec.template.spec immutable.
func (MachinePoolTemplateValidator) ValidateUpdate(ctx context.Context, old, o *infrav1.TerraformMachinePoolTemplate) (admission.Warnings, error) {
	prev := poolTemplate(old)
	return nil, templateRules(ctx, &prev, poolTemplate(o))
}

// ValidateDelete admits every delete.
func (MachinePoolTemplateValidator) ValidateDelete(context.Context, *infrav1.TerraformMachinePoolTemplate) (admission.Warnings, error) {
	return nil, nil
}
