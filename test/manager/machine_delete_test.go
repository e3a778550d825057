package manager_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func capiObject(t *testing.T, kind, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     spec,
	}}
	if err := env.Client.Create(context.Background(), u); err != nil {
		t.Fatalf("creating %s %s: %v", kind, name, err)
	}
	return u
}

func terraformMachine(t *testing.T, name string, annotations map[string]string) *infrav1.TerraformMachine {
	t.Helper()
	m := &infrav1.TerraformMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: annotations,
			Labels: map[string]string{infrav1.ClusterNameLabel: "moving"}},
		Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: "local/noop-machine:tofu"}},
	}
	if err := env.Client.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A TerraformMachine a Machine uses is deleted through the Machine (which
// drains the node), never directly; clusterctl move's deletes pass while
// the Cluster is paused.
func TestMachineInUseIsDeletedThroughItsMachine(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	used := terraformMachine(t, "used", nil)
	capiObject(t, "Machine", "worker-0", map[string]any{
		"clusterName": "demo",
		"bootstrap":   map[string]any{"dataSecretName": "boot"},
		"infrastructureRef": map[string]any{
			"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "TerraformMachine", "name": "used",
		},
	})
	err := env.Client.Delete(ctx, used)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "delete the Machine worker-0 instead") {
		t.Fatalf("want the delete refused naming the Machine, got %v", err)
	}

	unused := terraformMachine(t, "unused", nil)
	if err := env.Client.Delete(ctx, unused); err != nil {
		t.Fatalf("an unreferenced TerraformMachine could not be deleted: %v", err)
	}

	capiObject(t, "Cluster", "moving", map[string]any{"paused": true})
	moved := terraformMachine(t, "moved", map[string]string{infrav1.DeleteForMoveAnnotation: ""})
	capiObject(t, "Machine", "worker-1", map[string]any{
		"clusterName": "moving",
		"bootstrap":   map[string]any{"dataSecretName": "boot"},
		"infrastructureRef": map[string]any{
			"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "TerraformMachine", "name": "moved",
		},
	})
	if err := env.Client.Delete(ctx, moved); err != nil {
		t.Fatalf("clusterctl move's delete of a paused cluster's machine was refused: %v", err)
	}
}
