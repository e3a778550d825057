package inputs_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const ns = "team-a"

// A realistic set of Cluster API objects: a ClusterClass cluster with a
// user endpoint, a kubeadm control-plane Machine and an autoscaled pool.

func cluster() *clusterv1.Cluster {
	return &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: ns, UID: "c-uid", Generation: 7},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:          clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16"}},
				Services:      clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/12"}},
				ServiceDomain: "cluster.local",
				APIServerPort: 6443,
			},
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api.prod.example.com", Port: 6443},
			Topology: clusterv1.Topology{
				ClassRef: clusterv1.ClusterClassRef{Name: "quick-start"},
				Version:  "v1.37.2",
			},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "TerraformCluster", Name: "prod-x7k2q",
			},
		},
		Status: clusterv1.ClusterStatus{
			Initialization: clusterv1.ClusterInitializationStatus{ControlPlaneInitialized: ptr.To(true)},
		},
	}
}

func terraformCluster() *infrav1.TerraformCluster {
	return &infrav1.TerraformCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: "prod-x7k2q", Namespace: ns,
			Labels:      map[string]string{infrav1.ClusterNameLabel: "prod"},
			Annotations: map[string]string{infrav1.ClonedFromNameAnnotation: "quick-start-cluster"},
		},
		Spec: infrav1.TerraformClusterSpec{
			Source: infrav1.SourceSpec{Image: "ghcr.io/example/cluster:1.2.0"},
		},
	}
}

func clusterRole() inputs.ClusterRole {
	tc := terraformCluster()
	return inputs.ClusterRole{
		Common:  inputs.NewCommon("TerraformCluster", tc, "prod"),
		Cluster: cluster(),
		Infra:   tc,
	}
}

func machine() *clusterv1.Machine {
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name: "prod-cp-abcde", Namespace: ns,
			Labels: map[string]string{
				clusterv1.ClusterNameLabel:         "prod",
				clusterv1.MachineControlPlaneLabel: "",
			},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName:   "prod",
			Version:       "v1.37.2+rke2r1",
			FailureDomain: "zone-a",
			Bootstrap:     clusterv1.Bootstrap{DataSecretName: ptr.To("prod-cp-abcde-bootstrap")},
		},
	}
}

// exports carry <, > and & to show they stay literal.
var exports = json.RawMessage(`{"network_id":"net-42","subnets":{"zone-a":"sub-1"},"ports":[6443,10250],"note":"a<b && c>d"}`)

func machineRole() inputs.MachineRole {
	tm := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{
		Name: "prod-cp-abcde-tm", Namespace: ns,
		Annotations: map[string]string{infrav1.ClonedFromNameAnnotation: "prod-control-plane"},
	}}
	return inputs.MachineRole{
		Common:         inputs.NewCommon("TerraformMachine", tm, "prod"),
		Machine:        machine(),
		Bootstrap:      inputs.BootstrapFromSecret(map[string][]byte{"value": []byte("#cloud-config\nruncmd: [kubeadm init]\n"), "format": []byte("cloud-config")}),
		ClusterExports: exports,
	}
}

func machinePool() *clusterv1.MachinePool {
	return &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{
			Name: "prod-workers", Namespace: ns,
			Annotations: map[string]string{
				infrav1.AutoscalerMinSizeAnnotation: "2",
				infrav1.AutoscalerMaxSizeAnnotation: "10",
			},
		},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName:    "prod",
			Replicas:       ptr.To[int32](3),
			FailureDomains: []string{"zone-a", "zone-b"},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"node-role.example.com/worker": "", "tier": "general"}},
				Spec: clusterv1.MachineSpec{
					ClusterName: "prod",
					Version:     "v1.37.2",
					Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("prod-workers-bootstrap")},
				},
			},
		},
	}
}

func terraformMachinePool() *infrav1.TerraformMachinePool {
	return &infrav1.TerraformMachinePool{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-workers-tmp", Namespace: ns},
		Spec:       infrav1.TerraformMachinePoolSpec{Source: infrav1.SourceSpec{Image: "ghcr.io/example/pool:0.4.1"}},
		Status:     infrav1.TerraformMachinePoolStatus{Replicas: ptr.To[int32](5)},
	}
}

func poolRole() inputs.PoolRole {
	tmp := terraformMachinePool()
	return inputs.PoolRole{
		Common:                inputs.NewCommon("TerraformMachinePool", tmp, "prod"),
		MachinePool:           machinePool(),
		Infra:                 tmp,
		Bootstrap:             inputs.BootstrapFromSecret(map[string][]byte{"value": []byte(`{"ignition":{"version":"3.4.0"}}`), "format": []byte("ignition")}),
		ClusterExports:        exports,
		ClusterFailureDomains: []string{"zone-a", "zone-b", "zone-c"},
	}
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// render renders and validates inputs against the contract schema.
func render(t *testing.T, in inputs.RoleInputs) map[string]any {
	t.Helper()
	data, err := in.Tfvars()
	if err != nil {
		t.Fatal(err)
	}
	validate(t, in, data)
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
