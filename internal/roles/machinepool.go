package roles

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// MachinePool is the TerraformMachinePool role.
type MachinePool struct{}

var _ Role = MachinePool{}

// Kind implements Role.
func (MachinePool) Kind() string { return state.KindMachinePool }

// Contract implements Role.
func (MachinePool) Contract() contract.Role { return contract.RoleMachinePool }

// Mutable implements Role.
func (MachinePool) Mutable() bool { return true }

// Capabilities implements Role.
func (MachinePool) Capabilities() Capabilities {
	return Capabilities{GuardsExports: true, RefreshesAfterApply: true, ReadyFollowsApplies: true, SyncsOwner: true, ShortName: "tfmp"}
}

// Finalizer implements Role.
func (MachinePool) Finalizer() string { return infrav1.TerraformMachinePoolFinalizer }

// New implements Role.
func (MachinePool) New() client.Object { return &infrav1.TerraformMachinePool{} }

// View implements Role.
func (MachinePool) View(obj client.Object) Workload {
	tmp := obj.(*infrav1.TerraformMachinePool)
	w := Workload{Object: tmp, Source: tmp.Spec.Source, IdentityRef: tmp.Spec.IdentityRef, Jobs: tmp.Spec.Jobs,
		Variables: tmp.Spec.Variables, VariablesFrom: tmp.Spec.VariablesFrom, DeletionPolicy: tmp.Spec.DeletionPolicy,
		AdoptRetainedState: tmp.Spec.AdoptRetainedState != nil && *tmp.Spec.AdoptRetainedState,
		PendingPlanRef:     &tmp.Status.PendingPlanRef,
		Status:             &tmp.Status.WorkspaceStatus}
	if tmp.Spec.Drift != nil {
		w.DriftInterval = tmp.Spec.Drift.IntervalSeconds
	}
	prov := tmp.Status.Initialization.Provisioned
	w.MembershipConverging = prov != nil && *prov && tmp.Status.Replicas != nil && int(*tmp.Status.Replicas) != len(tmp.Spec.ProviderIDList)
	return w
}

// Owner implements Role: the MachinePool owning the TerraformMachinePool,
// whose template's infrastructureRef must name it.
func (MachinePool) Owner(ctx context.Context, r client.Reader, obj client.Object) (Owner, error) {
	return memberOwner(ctx, r, obj, member{
		ownerKind: "MachinePool", infraKind: state.KindMachinePool, refField: "template infrastructureRef",
		waiting: infrav1.WaitingForOwnerMachinePoolReason, owner: &clusterv1.MachinePool{},
		spec: func(o client.Object) (clusterv1.ContractVersionedObjectReference, string) {
			mp := o.(*clusterv1.MachinePool)
			return mp.Spec.Template.Spec.InfrastructureRef, mp.Spec.ClusterName
		},
	})
}

// Inputs implements Role: the template's bootstrap data and the cluster's
// exports and failure domains, re-read on every reconcile.
func (MachinePool) Inputs(ctx context.Context, r client.Reader, obj client.Object, o Owner, _ []byte) (inputs.RoleInputs, *metav1.Condition, error) {
	mp := o.Object.(*clusterv1.MachinePool)
	boot, cond, err := bootstrap(ctx, r, obj.GetNamespace(), mp.Spec.Template.Spec.Bootstrap.DataSecretName, "MachinePool "+mp.Name)
	if cond != nil || err != nil {
		return nil, cond, err
	}
	co, cond, err := readClusterOutputs(ctx, r, o.Infra)
	if cond != nil || err != nil {
		return nil, cond, err
	}
	return inputs.PoolRole{
		Common:      inputs.NewCommon(state.KindMachinePool, obj, o.ClusterName),
		MachinePool: mp, Infra: obj.(*infrav1.TerraformMachinePool), Bootstrap: boot,
		ClusterExports: co.Exports, ClusterFailureDomains: co.FailureDomains,
	}, nil, nil
}
