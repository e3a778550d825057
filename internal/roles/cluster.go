package roles

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// Cluster is the TerraformCluster role.
type Cluster struct{}

var _ Role = Cluster{}

// Kind implements Role.
func (Cluster) Kind() string { return state.KindCluster }

// Contract implements Role.
func (Cluster) Contract() contract.Role { return contract.RoleCluster }

// Mutable implements Role.
func (Cluster) Mutable() bool { return true }

// Capabilities implements Role.
func (Cluster) Capabilities() Capabilities {
	return Capabilities{Dependents: true, GuardsEveryApply: true, ShortName: "tfc"}
}

// Finalizer implements Role.
func (Cluster) Finalizer() string { return infrav1.TerraformClusterFinalizer }

// New implements Role.
func (Cluster) New() client.Object { return &infrav1.TerraformCluster{} }

// View implements Role.
func (Cluster) View(obj client.Object) Workload {
	tc := obj.(*infrav1.TerraformCluster)
	w := Workload{Object: tc, Source: tc.Spec.Source, IdentityRef: tc.Spec.IdentityRef, Jobs: tc.Spec.Jobs,
		Variables: tc.Spec.Variables, VariablesFrom: tc.Spec.VariablesFrom, DeletionPolicy: tc.Spec.DeletionPolicy,
		AdoptRetainedState: tc.Spec.AdoptRetainedState != nil && *tc.Spec.AdoptRetainedState,
		Manual:             tc.Spec.ApplyPolicy == infrav1.ApplyPolicyManual,
		PendingPlanRef:     &tc.Status.PendingPlanRef,
		Status:             &tc.Status.WorkspaceStatus}
	if tc.Spec.Drift != nil {
		w.DriftInterval = tc.Spec.Drift.IntervalSeconds
	}
	return w
}

// Owner implements Role: the Cluster owning the TerraformCluster, whose
// infrastructureRef must name it.
func (Cluster) Owner(ctx context.Context, r client.Reader, obj client.Object) (Owner, error) {
	tc := obj.(*infrav1.TerraformCluster)
	o := Owner{Infra: tc, Paused: paused(obj, nil)}
	ref := ownerRef(obj, "Cluster")
	if ref == nil {
		o.ClusterName = obj.GetLabels()[infrav1.ClusterNameLabel]
		o.NotReady = notReady(metav1.ConditionUnknown, infrav1.WaitingForOwnerReason,
			"Waiting for a Cluster to own this TerraformCluster (set Cluster.spec.infrastructureRef to it)")
		o.Ownerless = true
		return o, nil
	}
	name := ref.Name
	o.ClusterName = name
	// The Cluster alone: the TerraformCluster it names is obj, read live
	// by the pass already.
	cluster, err := clusterNamed(ctx, r, obj.GetNamespace(), name)
	if err != nil {
		return o, err
	}
	if cluster == nil {
		o.NotReady = notReady(metav1.ConditionFalse, infrav1.OwnerNotFoundReason, "The owning Cluster %s no longer exists", name)
		return o, nil
	}
	o.Cluster, o.Object = cluster, cluster
	o.Paused = paused(obj, cluster)
	infra := cluster.Spec.InfrastructureRef
	switch {
	case infra.APIGroup != infrav1.GroupVersion.Group || infra.Kind != state.KindCluster:
		o.NotReady = notReady(metav1.ConditionFalse, infrav1.ClusterNotTerraformReason,
			"Cluster %s's infrastructureRef is a %s, not a TerraformCluster", name, infra.Kind)
		o.Mismatch = true
	case infra.Name != tc.Name:
		o.NotReady = notReady(metav1.ConditionFalse, infrav1.OwnerMismatchReason,
			"Cluster %s's infrastructureRef names TerraformCluster %q, not this one; CAPTF starts no Job and writes nothing to the Cluster", name, infra.Name)
		o.Mismatch = true
	default:
		if why := mismatch(obj, ref, cluster, cluster.Name); why != "" {
			o.NotReady = notReady(metav1.ConditionFalse, infrav1.OwnerMismatchReason, "Cluster %s does not own this TerraformCluster: %s", name, why)
			o.Mismatch = true
		}
	}
	return o, nil
}

// Inputs implements Role.
func (Cluster) Inputs(_ context.Context, _ client.Reader, obj client.Object, o Owner, recorded []byte) (inputs.RoleInputs, *metav1.Condition, error) {
	tc := obj.(*infrav1.TerraformCluster)
	return inputs.ClusterRole{
		Common:  inputs.NewCommon(state.KindCluster, tc, o.ClusterName),
		Cluster: o.Cluster, Infra: tc,
		ControlPlaneInitializedBefore: inputs.RecordedControlPlaneInitialized(recorded),
		EndpointFromModule:            tc.Annotations[infrav1.EndpointSourceAnnotation] == "module",
	}, nil, nil
}

// Dependents names, live through r, the TerraformMachines and then the
// TerraformMachinePools of the Cluster API Cluster clusterName in the
// namespace: a deleting TerraformCluster waits for them (DeletionBlocked).
func Dependents(ctx context.Context, r client.Reader, namespace, clusterName string) ([]string, error) {
	sel := client.MatchingLabels{infrav1.ClusterNameLabel: clusterName}
	var machines infrav1.TerraformMachineList
	if err := r.List(ctx, &machines, client.InNamespace(namespace), sel); err != nil {
		return nil, err
	}
	var pools infrav1.TerraformMachinePoolList
	if err := r.List(ctx, &pools, client.InNamespace(namespace), sel); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(machines.Items)+len(pools.Items))
	for i := range machines.Items {
		names = append(names, "TerraformMachine "+machines.Items[i].Name)
	}
	for i := range pools.Items {
		names = append(names, "TerraformMachinePool "+pools.Items[i].Name)
	}
	return names, nil
}
