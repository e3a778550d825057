package inputs

import (
	"encoding/json"
	"errors"
	"strconv"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
)

// PoolRole is what a TerraformMachinePool's inputs are rendered from.
type PoolRole struct {
	Common Common
	// MachinePool is the owning Cluster API MachinePool.
	MachinePool *clusterv1.MachinePool
	// Infra is the TerraformMachinePool itself; its status.replicas is the
	// observed size an autoscaled pool keeps.
	Infra *infrav1.TerraformMachinePool
	// Bootstrap is the pool template's bootstrap data Secret.
	Bootstrap Bootstrap
	// ClusterExports is the cluster state's exports output; nil (an
	// externally managed TerraformCluster) and JSON null render as {}.
	ClusterExports json.RawMessage
	// ClusterFailureDomains are the names in the cluster state's
	// failure_domains output (for an externally managed TerraformCluster:
	// its status.failureDomains).
	ClusterFailureDomains []string
}

var _ RoleInputs = PoolRole{}

// Role implements RoleInputs.
func (PoolRole) Role() contract.Role { return contract.RoleMachinePool }

// Tfvars implements RoleInputs.
func (r PoolRole) Tfvars() ([]byte, error) {
	if r.MachinePool == nil || r.Infra == nil {
		return nil, errors.New("the machinepool role needs its MachinePool and TerraformMachinePool")
	}
	if err := r.Common.check(contract.RoleMachinePool); err != nil {
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
	mp := r.MachinePool
	scaling := AutoscalingOf(mp.Annotations)
	labels := mp.Spec.Template.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	doc["machinepool_name"] = mp.Name
	doc["replicas"] = r.replicas(scaling)
	doc["failure_domains"] = nonNil(mp.Spec.FailureDomains)
	doc["cluster_failure_domains"] = nonNil(r.ClusterFailureDomains)
	doc["kubernetes_version"] = nullable(mp.Spec.Template.Spec.Version)
	doc["node_labels"] = labels
	doc["autoscaling"] = map[string]any{"enabled": scaling.Enabled, "min": scaling.Min, "max": scaling.Max}
	return encode(doc)
}

// replicas is the pool's desired size. Without autoscaling it is the
// MachinePool's (1 when unset). With autoscaling the module keeps the size
// it last reported (the autoscaler acts on the instances, not on
// spec.replicas), held within the autoscaler's bounds.
func (r PoolRole) replicas(scaling Autoscaling) int32 {
	n := int32(1)
	if r.MachinePool.Spec.Replicas != nil {
		n = *r.MachinePool.Spec.Replicas
	}
	if !scaling.Enabled {
		return n
	}
	if r.Infra.Status.Replicas != nil {
		n = *r.Infra.Status.Replicas
	}
	return min(max(n, scaling.Min), scaling.Max)
}

// Autoscaling is the pool's autoscaling switch.
type Autoscaling struct {
	Enabled  bool
	Min, Max int32
}

// AutoscalingOf reads a MachinePool's cluster-autoscaler size annotations:
// enabled only when both are present, non-negative integers and min <= max;
// otherwise disabled with zero bounds.
func AutoscalingOf(annotations map[string]string) Autoscaling {
	lo, okLo := annotations[infrav1.AutoscalerMinSizeAnnotation]
	hi, okHi := annotations[infrav1.AutoscalerMaxSizeAnnotation]
	if !okLo || !okHi {
		return Autoscaling{}
	}
	minSize, errLo := strconv.ParseInt(lo, 10, 32)
	maxSize, errHi := strconv.ParseInt(hi, 10, 32)
	if errLo != nil || errHi != nil || minSize < 0 || minSize > maxSize {
		return Autoscaling{}
	}
	return Autoscaling{Enabled: true, Min: int32(minSize), Max: int32(maxSize)}
}
