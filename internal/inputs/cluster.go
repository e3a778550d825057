package inputs

import (
	"encoding/json"
	"errors"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
)

// RoleInputs is what was observed for one object, ready to render as its
// role's contract inputs.
type RoleInputs interface {
	// Role is the role the inputs are for.
	Role() contract.Role
	// Tfvars renders the role's contract inputs: the terraform.tfvars.json
	// of a run without user variables (see Files for the one with them).
	// The bytes are deterministic: sorted keys, compact, <, > and &
	// literal, one trailing newline.
	Tfvars() ([]byte, error)
}

// ClusterRole is what a TerraformCluster's inputs are rendered from.
type ClusterRole struct {
	Common Common
	// Cluster is the owning Cluster API Cluster.
	Cluster *clusterv1.Cluster
	// Infra is the TerraformCluster itself.
	Infra *infrav1.TerraformCluster
	// ControlPlaneInitializedBefore is control_plane_initialized as last
	// rendered into the durable inputs record (see
	// RecordedControlPlaneInitialized): once true it stays true.
	ControlPlaneInitializedBefore bool
	// EndpointFromModule is true once the TerraformCluster carries
	// captf.io/endpoint-source=module: the module owns the endpoint and is
	// never handed it back.
	EndpointFromModule bool
}

var _ RoleInputs = ClusterRole{}

// Role implements RoleInputs.
func (ClusterRole) Role() contract.Role { return contract.RoleCluster }

// Tfvars implements RoleInputs. The cluster role gets no
// captf_cluster_outputs key.
func (r ClusterRole) Tfvars() ([]byte, error) {
	if r.Cluster == nil || r.Infra == nil {
		return nil, errors.New("the cluster role needs its Cluster and TerraformCluster")
	}
	if err := r.Common.check(contract.RoleCluster); err != nil {
		return nil, err
	}
	doc := r.Common.values()
	doc["control_plane_endpoint"] = r.endpoint()
	doc["kubernetes_version"] = nullable(r.Cluster.Spec.Topology.Version)
	initialized := r.Cluster.Status.Initialization.ControlPlaneInitialized
	doc["control_plane_initialized"] = (initialized != nil && *initialized) || r.ControlPlaneInitializedBefore
	doc["cluster_network"] = clusterNetwork(r.Cluster.Spec.ClusterNetwork)
	return encode(doc)
}

// endpoint is the endpoint the module does not own: the Cluster's, else the
// TerraformCluster's, when valid; null for a module that provides it.
func (r ClusterRole) endpoint() any {
	if r.EndpointFromModule {
		return nil
	}
	for _, ep := range []clusterv1.APIEndpoint{r.Cluster.Spec.ControlPlaneEndpoint, r.Infra.Spec.ControlPlaneEndpoint} {
		if ep.IsValid() {
			return map[string]any{"host": ep.Host, "port": ep.Port}
		}
	}
	return nil
}

// clusterNetwork is null only when the Cluster sets none of it; otherwise
// every attribute is present, [] for unset lists and null for unset scalars.
func clusterNetwork(n clusterv1.ClusterNetwork) any {
	if len(n.Pods.CIDRBlocks) == 0 && len(n.Services.CIDRBlocks) == 0 && n.ServiceDomain == "" && n.APIServerPort == 0 {
		return nil
	}
	return map[string]any{
		"pods":            nonNil(n.Pods.CIDRBlocks),
		"services":        nonNil(n.Services.CIDRBlocks),
		"service_domain":  nullable(n.ServiceDomain),
		"api_server_port": nullable(n.APIServerPort),
	}
}

// RecordedControlPlaneInitialized reads control_plane_initialized from a
// previously rendered cluster tfvars (the durable inputs record). Anything
// unreadable counts as false.
func RecordedControlPlaneInitialized(tfvars []byte) bool {
	var doc struct {
		Initialized bool `json:"control_plane_initialized"`
	}
	if json.Unmarshal(tfvars, &doc) != nil {
		return false
	}
	return doc.Initialized
}
