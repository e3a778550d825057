package roles

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// Machine is the TerraformMachine role: immutable, it never re-applies.
type Machine struct{}

var _ Role = Machine{}

// Kind implements Role.
func (Machine) Kind() string { return state.KindMachine }

// Contract implements Role.
func (Machine) Contract() contract.Role { return contract.RoleMachine }

// Mutable implements Role.
func (Machine) Mutable() bool { return false }

// Capabilities implements Role.
func (Machine) Capabilities() Capabilities {
	return Capabilities{RefreshesAfterApply: true, ShortName: "tfm"}
}

// Finalizer implements Role.
func (Machine) Finalizer() string { return infrav1.TerraformMachineFinalizer }

// New implements Role.
func (Machine) New() client.Object { return &infrav1.TerraformMachine{} }

// View implements Role.
func (Machine) View(obj client.Object) Workload {
	tm := obj.(*infrav1.TerraformMachine)
	w := Workload{Object: tm, Source: tm.Spec.Source, IdentityRef: tm.Spec.IdentityRef, Jobs: tm.Spec.Jobs,
		Variables: tm.Spec.Variables, VariablesFrom: tm.Spec.VariablesFrom, DeletionPolicy: tm.Spec.DeletionPolicy,
		AdoptRetainedState: tm.Spec.AdoptRetainedState != nil && *tm.Spec.AdoptRetainedState,
		Status:             &tm.Status.WorkspaceStatus}
	if tm.Spec.Drift != nil {
		w.DriftInterval = tm.Spec.Drift.IntervalSeconds
	}
	return w
}

// Owner implements Role: the Machine owning the TerraformMachine, whose
// infrastructureRef must name it.
func (Machine) Owner(ctx context.Context, r client.Reader, obj client.Object) (Owner, error) {
	return memberOwner(ctx, r, obj, member{
		ownerKind: "Machine", infraKind: state.KindMachine, refField: "infrastructureRef",
		waiting: infrav1.WaitingForOwnerMachineReason, owner: &clusterv1.Machine{},
		spec: func(o client.Object) (clusterv1.ContractVersionedObjectReference, string) {
			m := o.(*clusterv1.Machine)
			return m.Spec.InfrastructureRef, m.Spec.ClusterName
		},
	})
}

// Inputs implements Role: the bootstrap data and the cluster's exports.
func (Machine) Inputs(ctx context.Context, r client.Reader, obj client.Object, o Owner, _ []byte) (inputs.RoleInputs, *metav1.Condition, error) {
	m := o.Object.(*clusterv1.Machine)
	boot, cond, err := bootstrap(ctx, r, obj.GetNamespace(), m.Spec.Bootstrap.DataSecretName, "Machine "+m.Name)
	if cond != nil || err != nil {
		return nil, cond, err
	}
	co, cond, err := readClusterOutputs(ctx, r, o.Infra)
	if cond != nil || err != nil {
		return nil, cond, err
	}
	return inputs.MachineRole{
		Common:  inputs.NewCommon(state.KindMachine, obj, o.ClusterName),
		Machine: m, Bootstrap: boot, ClusterExports: co.Exports,
	}, nil, nil
}

// bootstrap reads a bootstrap data Secret, live.
func bootstrap(ctx context.Context, r client.Reader, namespace string, name *string, owner string) (inputs.Bootstrap, *metav1.Condition, error) {
	if name == nil || *name == "" {
		return inputs.Bootstrap{}, notReady(metav1.ConditionUnknown, infrav1.WaitingForBootstrapDataReason,
			"Waiting for the bootstrap provider to set %s's bootstrap.dataSecretName", owner), nil
	}
	secret := &corev1.Secret{}
	found, err := getOptional(ctx, r, client.ObjectKey{Namespace: namespace, Name: *name}, secret)
	if err != nil {
		return inputs.Bootstrap{}, nil, err
	}
	if !found {
		return inputs.Bootstrap{}, notReady(metav1.ConditionUnknown, infrav1.WaitingForBootstrapDataReason,
			"Waiting for the bootstrap data Secret %s of %s", *name, owner), nil
	}
	return inputs.BootstrapFromSecret(secret.Data), nil, nil
}
