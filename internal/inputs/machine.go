package inputs

import (
	"encoding/json"
	"errors"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"captf.io/captf/pkg/contract"
)

// MachineRole is what a TerraformMachine's inputs are rendered from.
type MachineRole struct {
	Common Common
	// Machine is the owning Cluster API Machine.
	Machine *clusterv1.Machine
	// Bootstrap is the Machine's bootstrap data Secret.
	Bootstrap Bootstrap
	// ClusterExports is the cluster state's exports output; nil (an
	// externally managed TerraformCluster) and JSON null render as {}.
	ClusterExports json.RawMessage
}

var _ RoleInputs = MachineRole{}

// Role implements RoleInputs.
func (MachineRole) Role() contract.Role { return contract.RoleMachine }

// Tfvars implements RoleInputs.
func (r MachineRole) Tfvars() ([]byte, error) {
	if r.Machine == nil {
		return nil, errors.New("the machine role needs its Machine")
	}
	if err := r.Common.check(contract.RoleMachine); err != nil {
		return nil, err
	}
	doc := r.Common.values()
	exports, err := exportsValue(r.ClusterExports)
	if err != nil {
		return nil, err
	}
	doc["captf_cluster_outputs"] = exports
	if err := r.Bootstrap.values(doc); err != nil {
		return nil, err
	}
	_, controlPlane := r.Machine.Labels[clusterv1.MachineControlPlaneLabel]
	doc["machine_name"] = r.Machine.Name
	doc["failure_domain"] = nullable(r.Machine.Spec.FailureDomain)
	doc["kubernetes_version"] = nullable(r.Machine.Spec.Version)
	doc["control_plane"] = controlPlane
	return encode(doc)
}
