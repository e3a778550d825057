package release

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The templates use exactly the clusterctl variables of the operator
// reference, required or with the default it documents.
func TestTemplateVariables(t *testing.T) {
	t.Parallel()
	required := []string{"CLUSTER_NAME", "CONTROL_PLANE_MACHINE_COUNT", "KUBERNETES_VERSION", "TERRAFORM_CLUSTER_IMAGE",
		"TERRAFORM_IDENTITY_NAME", "TERRAFORM_MACHINE_IMAGE", "WORKER_MACHINE_COUNT"}
	network := map[string]string{"POD_CIDR": "192.168.0.0/16", "SERVICE_CIDR": "10.128.0.0/12"}
	health := map[string]string{
		"TERRAFORM_NODE_STARTUP_TIMEOUT": "1200", "TERRAFORM_UNHEALTHY_TIMEOUT": "1800",
		"TERRAFORM_CP_NODE_STARTUP_TIMEOUT": "1800", "TERRAFORM_CP_UNHEALTHY_TIMEOUT": "3600",
	}
	for _, tc := range []struct {
		file     string
		required []string
		defaults map[string]string
	}{
		{"cluster-template.yaml", required, mergeMaps(network, health)},
		{"cluster-template-clusterclass.yaml", required, network},
		{"identity.yaml", []string{"NAMESPACE", "TERRAFORM_IDENTITY_NAME"}, map[string]string{}},
		{"clusterclass-noop.yaml", nil, map[string]string{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "templates", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			required, defaults, err := Variables(string(raw))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(required, tc.required) || !maps.Equal(defaults, tc.defaults) {
				t.Errorf("required %v, defaults %v; want required %v, defaults %v", required, defaults, tc.required, tc.defaults)
			}
		})
	}
}

func mergeMaps(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
