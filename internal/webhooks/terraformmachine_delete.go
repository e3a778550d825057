package webhooks

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// MachineDeletePath validates TerraformMachine deletes: a separate entry
// with failurePolicy Ignore, so a namespace or provider removal never hangs
// on the webhook.
const MachineDeletePath = "/validate-delete-infrastructure-cluster-x-k8s-io-v1alpha1-terraformmachine"

var (
	machineListGVK = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineList"}
	clusterGVK     = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}
)

// MachineDeleteValidator refuses deleting a TerraformMachine that a live
// Machine still uses: Cluster API must delete the Machine, which drains
// the node first. Machines are read uncached and matched by their
// spec.infrastructureRef alone (owner references and labels are not
// trusted). clusterctl move's deletes pass while the Cluster is paused.
type MachineDeleteValidator struct {
	Reader client.Reader
}

var _ admission.Validator[*infrav1.TerraformMachine] = &MachineDeleteValidator{}

// ValidateCreate admits: this validator only guards deletes.
func (v *MachineDeleteValidator) ValidateCreate(context.Context, *infrav1.TerraformMachine) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate admits: this validator only guards deletes.
func (v *MachineDeleteValidator) ValidateUpdate(context.Context, *infrav1.TerraformMachine, *infrav1.TerraformMachine) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete refuses while a non-deleting Machine references m.
func (v *MachineDeleteValidator) ValidateDelete(ctx context.Context, m *infrav1.TerraformMachine) (admission.Warnings, error) {
	if _, ok := m.Annotations[infrav1.DeleteForMoveAnnotation]; ok {
		paused, err := v.clusterPaused(ctx, m)
		if err != nil {
			return nil, err
		}
		if paused {
			return nil, nil
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(machineListGVK)
	if err := v.Reader.List(ctx, list, client.InNamespace(m.Namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil // no Cluster API here: no Machine can reference it
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("listing Machines: %w", err))
	}
	for _, machine := range list.Items {
		if machine.GetDeletionTimestamp() != nil {
			continue
		}
		ref, _, _ := unstructured.NestedStringMap(machine.Object, "spec", "infrastructureRef")
		if ref["apiGroup"] == infrav1.GroupVersion.Group && ref["kind"] == "TerraformMachine" && ref["name"] == m.Name {
			return nil, apierrors.NewForbidden(infrav1.GroupVersion.WithResource("terraformmachines").GroupResource(), m.Name,
				fmt.Errorf("the Machine %s uses it: delete the Machine %s instead, and Cluster API deletes this TerraformMachine after draining its node",
					machine.GetName(), machine.GetName()))
		}
	}
	return nil, nil
}

// clusterPaused reports whether the Cluster named by m's cluster-name label
// has spec.paused set.
func (v *MachineDeleteValidator) clusterPaused(ctx context.Context, m *infrav1.TerraformMachine) (bool, error) {
	name := m.Labels[infrav1.ClusterNameLabel]
	if name == "" {
		return false, nil
	}
	c := &unstructured.Unstructured{}
	c.SetGroupVersionKind(clusterGVK)
	if err := v.Reader.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, c); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, apierrors.NewInternalError(fmt.Errorf("reading Cluster %s: %w", name, err))
	}
	paused, _, _ := unstructured.NestedBool(c.Object, "spec", "paused")
	return paused, nil
}
