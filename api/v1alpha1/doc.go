// Package v1alpha1 holds the API of CAPTF, the Cluster API infrastructure
// provider that runs Terraform and OpenTofu modules in Kubernetes Jobs.
//
// It defines the eight kinds of the infrastructure.cluster.x-k8s.io/v1alpha1
// group: the workload kinds TerraformCluster, TerraformMachine and
// TerraformMachinePool, their three templates, the cluster-scoped
// TerraformClusterIdentity and the manager-created TerraformPlan; and, as
// documented constants, the condition types and reasons, labels,
// annotations and finalizers that make up CAPTF's compatibility contract.
//
// The CRDs declare no schema defaults: every default is resolved by the
// manager at reconcile or Job-build time and never written back. Validation
// that the OpenAPI schema and CEL can express lives in the markers here;
// the rest (who may write a field, checks needing other objects) is the
// admission webhooks' job.
//
// This package imports nothing else from CAPTF.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1alpha1
