package devenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The shipped templates use exactly the clusterctl variables of the
// operator reference, required and optional as it says.
func TestShippedTemplateVariables(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file               string
		required, optional []string
	}{
		{
			file: "cluster-template.yaml",
			required: []string{"CLUSTER_NAME", "CONTROL_PLANE_MACHINE_COUNT", "KUBERNETES_VERSION", "TERRAFORM_CLUSTER_IMAGE",
				"TERRAFORM_IDENTITY_NAME", "TERRAFORM_MACHINE_IMAGE", "WORKER_MACHINE_COUNT"},
			optional: []string{"POD_CIDR", "SERVICE_CIDR", "TERRAFORM_CP_NODE_STARTUP_TIMEOUT", "TERRAFORM_CP_UNHEALTHY_TIMEOUT",
				"TERRAFORM_NODE_STARTUP_TIMEOUT", "TERRAFORM_UNHEALTHY_TIMEOUT"},
		},
		{
			file: "cluster-template-clusterclass.yaml",
			required: []string{"CLUSTER_NAME", "CONTROL_PLANE_MACHINE_COUNT", "KUBERNETES_VERSION", "TERRAFORM_CLUSTER_IMAGE",
				"TERRAFORM_IDENTITY_NAME", "TERRAFORM_MACHINE_IMAGE", "WORKER_MACHINE_COUNT"},
			optional: []string{"POD_CIDR", "SERVICE_CIDR"},
		},
		{file: "identity.yaml", required: []string{"NAMESPACE", "TERRAFORM_IDENTITY_NAME"}},
		{file: "clusterclass-noop.yaml"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "templates", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			required, optional, err := TemplateVariables(string(raw))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(required, tc.required) || !slices.Equal(optional, tc.optional) {
				t.Errorf("variables: required %v, optional %v; want required %v, optional %v", required, optional, tc.required, tc.optional)
			}
		})
	}
}

// Rendering applies the documented defaults, and a missing required
// variable fails naming each one, before anything is rendered.
func TestRenderTemplate(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "templates", "cluster-template.yaml")
	vars := map[string]string{
		"CLUSTER_NAME": "c1", "CONTROL_PLANE_MACHINE_COUNT": "3", "KUBERNETES_VERSION": "v1.34.1", "WORKER_MACHINE_COUNT": "2",
		"TERRAFORM_CLUSTER_IMAGE": "registry.example/cluster:v1", "TERRAFORM_IDENTITY_NAME": "id", "TERRAFORM_MACHINE_IMAGE": "registry.example/machine:v1",
	}
	objs, err := RenderTemplate(path, vars)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]any{}
	for _, o := range objs {
		switch o.GetKind() + "/" + o.GetName() {
		case "Cluster/c1":
			found["pods"] = o.Object["spec"].(map[string]any)["clusterNetwork"].(map[string]any)["pods"].(map[string]any)["cidrBlocks"].([]any)[0]
		case "MachineHealthCheck/c1-md-0":
			found["startup"] = o.Object["spec"].(map[string]any)["checks"].(map[string]any)["nodeStartupTimeoutSeconds"]
		case "KubeadmControlPlane/c1-control-plane":
			found["replicas"] = o.Object["spec"].(map[string]any)["replicas"]
		}
	}
	if found["pods"] != "192.168.0.0/16" || found["startup"] != int64(1200) || found["replicas"] != int64(3) {
		t.Errorf("rendered pods %v, worker node startup timeout %v, control plane replicas %v; want 192.168.0.0/16, 1200, 3", found["pods"], found["startup"], found["replicas"])
	}

	delete(vars, "KUBERNETES_VERSION")
	delete(vars, "TERRAFORM_MACHINE_IMAGE")
	_, err = RenderTemplate(path, vars)
	if err == nil || !strings.Contains(err.Error(), "KUBERNETES_VERSION, TERRAFORM_MACHINE_IMAGE") {
		t.Errorf("rendering without two required variables: %v, want an error naming both", err)
	}
}
