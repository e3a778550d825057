package machinetemplate

// What the TerraformMachineTemplate controller reads and writes; `make
// generate` turns these markers into config/rbac/role.yaml. It also reads
// Secrets (image pull Secrets) and ConfigMaps (variables sources), which
// the workload lifecycle's markers grant.

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=terraformmachinetemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=terraformmachinetemplates/status,verbs=patch
// +kubebuilder:rbac:groups=core;events.k8s.io,resources=events,verbs=create;patch
