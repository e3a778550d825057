package inputs_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
)

func validate(t *testing.T, in inputs.RoleInputs, data []byte) {
	t.Helper()
	if err := contract.ValidateInputs(in.Role(), data); err != nil {
		t.Errorf("rendered %s inputs break the contract: %v\n%s", in.Role(), err, data)
	}
}

func TestTfvarsGolden(t *testing.T) {
	testCases := []struct {
		name string
		in   inputs.RoleInputs
	}{
		{"cluster.tfvars.json", clusterRole()},
		{"machine.tfvars.json", machineRole()},
		{"machinepool.tfvars.json", poolRole()},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := tc.in.Tfvars()
			if err != nil {
				t.Fatal(err)
			}
			validate(t, tc.in, data)
			golden(t, tc.name, data)
			for range 5 {
				again, _ := tc.in.Tfvars()
				if !bytes.Equal(again, data) {
					t.Fatal("the same objects render different bytes")
				}
			}
			if !bytes.Contains(data, []byte(`a<b && c>d`)) && tc.in.Role() != contract.RoleCluster {
				t.Error("<, > or & were escaped in the exports")
			}
		})
	}
}

func TestCommonKeys(t *testing.T) {
	for _, in := range []inputs.RoleInputs{clusterRole(), machineRole(), poolRole()} {
		doc := render(t, in)
		tags := doc["captf_tags"].(map[string]any)
		if len(tags) != 6 || tags["captf.io/managed-by"] != "captf" || tags["captf.io/cluster"] != "prod" || tags["captf.io/namespace"] != ns {
			t.Errorf("%s tags %v", in.Role(), tags)
		}
		_, hasOutputs := doc["captf_cluster_outputs"]
		if hasOutputs == (in.Role() == contract.RoleCluster) {
			t.Errorf("%s: captf_cluster_outputs present = %v", in.Role(), hasOutputs)
		}
	}
	// No template annotation: the tag is "" and still present.
	r := poolRole()
	doc := render(t, r)
	if tags := doc["captf_tags"].(map[string]any); tags["captf.io/template"] != "" {
		t.Errorf("template tag %v, want \"\"", tags["captf.io/template"])
	}
}

func TestClusterRoleEdgeCases(t *testing.T) {
	userEndpoint := map[string]any{"host": "api.prod.example.com", "port": float64(6443)}
	testCases := []struct {
		name   string
		mutate func(r *inputs.ClusterRole)
		want   map[string]any
	}{
		{
			name: "Cluster endpoint wins over the TerraformCluster's",
			mutate: func(r *inputs.ClusterRole) {
				r.Infra.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "other", Port: 443}
			},
			want: map[string]any{"control_plane_endpoint": userEndpoint},
		},
		{
			name: "half-set Cluster endpoint falls back to the TerraformCluster's",
			mutate: func(r *inputs.ClusterRole) {
				r.Cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "api.prod.example.com"}
				r.Infra.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "tc.example.com", Port: 443}
			},
			want: map[string]any{"control_plane_endpoint": map[string]any{"host": "tc.example.com", "port": float64(443)}},
		},
		{
			name: "no valid endpoint anywhere is null",
			mutate: func(r *inputs.ClusterRole) {
				r.Cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Port: 6443}
				r.Infra.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{}
			},
			want: map[string]any{"control_plane_endpoint": nil},
		},
		{
			name:   "endpoint from the module is never handed back",
			mutate: func(r *inputs.ClusterRole) { r.EndpointFromModule = true },
			want:   map[string]any{"control_plane_endpoint": nil},
		},
		{
			name:   "no topology: no version",
			mutate: func(r *inputs.ClusterRole) { r.Cluster.Spec.Topology = clusterv1.Topology{} },
			want:   map[string]any{"kubernetes_version": nil},
		},
		{
			name:   "controlPlaneInitialized unset is false",
			mutate: func(r *inputs.ClusterRole) { r.Cluster.Status.Initialization.ControlPlaneInitialized = nil },
			want:   map[string]any{"control_plane_initialized": false},
		},
		{
			name: "controlPlaneInitialized false but latched true",
			mutate: func(r *inputs.ClusterRole) {
				r.Cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(false)
				r.ControlPlaneInitializedBefore = true
			},
			want: map[string]any{"control_plane_initialized": true},
		},
		{
			name:   "no cluster network at all is null",
			mutate: func(r *inputs.ClusterRole) { r.Cluster.Spec.ClusterNetwork = clusterv1.ClusterNetwork{} },
			want:   map[string]any{"cluster_network": nil},
		},
		{
			name: "only a service domain: every key, [] and null for the rest",
			mutate: func(r *inputs.ClusterRole) {
				r.Cluster.Spec.ClusterNetwork = clusterv1.ClusterNetwork{ServiceDomain: "corp.local"}
			},
			want: map[string]any{"cluster_network": map[string]any{
				"pods": []any{}, "services": []any{}, "service_domain": "corp.local", "api_server_port": nil,
			}},
		},
		{
			name: "only pods",
			mutate: func(r *inputs.ClusterRole) {
				r.Cluster.Spec.ClusterNetwork = clusterv1.ClusterNetwork{Pods: clusterv1.NetworkRanges{CIDRBlocks: []string{"10.0.0.0/8", "fd00::/48"}}}
			},
			want: map[string]any{"cluster_network": map[string]any{
				"pods": []any{"10.0.0.0/8", "fd00::/48"}, "services": []any{}, "service_domain": nil, "api_server_port": nil,
			}},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r := clusterRole()
			tc.mutate(&r)
			expect(t, render(t, r), tc.want)
		})
	}
}

func TestRecordedControlPlaneInitialized(t *testing.T) {
	r := clusterRole()
	data, _ := r.Tfvars()
	if !inputs.RecordedControlPlaneInitialized(data) {
		t.Error("a rendered true was read as false")
	}
	r.Cluster.Status.Initialization.ControlPlaneInitialized = nil
	data, _ = r.Tfvars()
	for _, doc := range [][]byte{data, nil, []byte("not json"), []byte(`{"control_plane_initialized":"yes"}`)} {
		if inputs.RecordedControlPlaneInitialized(doc) {
			t.Errorf("%q read as true", doc)
		}
	}
}

func TestMachineRoleEdgeCases(t *testing.T) {
	testCases := []struct {
		name   string
		mutate func(r *inputs.MachineRole)
		want   map[string]any
	}{
		{
			name: "worker without failure domain or version",
			mutate: func(r *inputs.MachineRole) {
				delete(r.Machine.Labels, clusterv1.MachineControlPlaneLabel)
				r.Machine.Spec.FailureDomain = ""
				r.Machine.Spec.Version = ""
			},
			want: map[string]any{"control_plane": false, "failure_domain": nil, "kubernetes_version": nil},
		},
		{
			name:   "version verbatim",
			mutate: func(*inputs.MachineRole) {},
			want:   map[string]any{"kubernetes_version": "v1.37.2+rke2r1", "control_plane": true, "machine_name": "prod-cp-abcde"},
		},
		{
			name:   "externally managed cluster: no exports",
			mutate: func(r *inputs.MachineRole) { r.ClusterExports = nil },
			want:   map[string]any{"captf_cluster_outputs": map[string]any{}},
		},
		{
			name:   "null exports",
			mutate: func(r *inputs.MachineRole) { r.ClusterExports = json.RawMessage(" null ") },
			want:   map[string]any{"captf_cluster_outputs": map[string]any{}},
		},
		{
			name:   "exports need not be an object",
			mutate: func(r *inputs.MachineRole) { r.ClusterExports = json.RawMessage(`["a",1]`) },
			want:   map[string]any{"captf_cluster_outputs": []any{"a", float64(1)}},
		},
		{
			name:   "no format key is cloud-config",
			mutate: func(r *inputs.MachineRole) { r.Bootstrap.Format = "" },
			want:   map[string]any{"bootstrap_format": "cloud-config"},
		},
		{
			name:   "empty bootstrap value",
			mutate: func(r *inputs.MachineRole) { r.Bootstrap.Value = nil },
			want:   map[string]any{"bootstrap_data": ""},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r := machineRole()
			tc.mutate(&r)
			expect(t, render(t, r), tc.want)
		})
	}
}

func TestPoolRoleEdgeCases(t *testing.T) {
	off := map[string]any{"enabled": false, "min": float64(0), "max": float64(0)}
	testCases := []struct {
		name        string
		annotations map[string]string // nil keeps the fixture's 2..10
		mutate      func(r *inputs.PoolRole)
		want        map[string]any
	}{
		{
			name: "autoscaling on: observed replicas",
			want: map[string]any{"replicas": float64(5), "autoscaling": map[string]any{"enabled": true, "min": float64(2), "max": float64(10)}},
		},
		{
			name:   "autoscaling on, nothing observed yet: spec replicas",
			mutate: func(r *inputs.PoolRole) { r.Infra.Status.Replicas = nil },
			want:   map[string]any{"replicas": float64(3)},
		},
		{
			name:   "autoscaling on, observed below min: clamped up",
			mutate: func(r *inputs.PoolRole) { r.Infra.Status.Replicas = ptr.To[int32](0) },
			want:   map[string]any{"replicas": float64(2)},
		},
		{
			name:   "autoscaling on, observed above max: clamped down",
			mutate: func(r *inputs.PoolRole) { r.Infra.Status.Replicas = ptr.To[int32](40) },
			want:   map[string]any{"replicas": float64(10)},
		},
		{
			name: "autoscaling on, neither set: 1 clamped into bounds",
			mutate: func(r *inputs.PoolRole) {
				r.Infra.Status.Replicas = nil
				r.MachinePool.Spec.Replicas = nil
			},
			want: map[string]any{"replicas": float64(2)},
		},
		{
			name:        "autoscaling min 0 max 0 is valid",
			annotations: map[string]string{"min": "0", "max": "0"},
			want:        map[string]any{"replicas": float64(0), "autoscaling": map[string]any{"enabled": true, "min": float64(0), "max": float64(0)}},
		},
		{
			name:        "no annotations: spec replicas",
			annotations: map[string]string{},
			want:        map[string]any{"replicas": float64(3), "autoscaling": off},
		},
		{
			name:        "no annotations, zero replicas allowed",
			annotations: map[string]string{},
			mutate:      func(r *inputs.PoolRole) { r.MachinePool.Spec.Replicas = ptr.To[int32](0) },
			want:        map[string]any{"replicas": float64(0)},
		},
		{
			name:        "no annotations, replicas unset: 1",
			annotations: map[string]string{},
			mutate:      func(r *inputs.PoolRole) { r.MachinePool.Spec.Replicas = nil },
			want:        map[string]any{"replicas": float64(1)},
		},
		{name: "only min", annotations: map[string]string{"min": "1"}, want: map[string]any{"autoscaling": off, "replicas": float64(3)}},
		{name: "only max", annotations: map[string]string{"max": "4"}, want: map[string]any{"autoscaling": off}},
		{name: "min above max", annotations: map[string]string{"min": "5", "max": "4"}, want: map[string]any{"autoscaling": off}},
		{name: "negative min", annotations: map[string]string{"min": "-1", "max": "4"}, want: map[string]any{"autoscaling": off}},
		{name: "not a number", annotations: map[string]string{"min": "one", "max": "4"}, want: map[string]any{"autoscaling": off}},
		{name: "fractional", annotations: map[string]string{"min": "1.5", "max": "4"}, want: map[string]any{"autoscaling": off}},
		{name: "empty", annotations: map[string]string{"min": "", "max": "4"}, want: map[string]any{"autoscaling": off}},
		{name: "overflow", annotations: map[string]string{"min": "1", "max": "99999999999"}, want: map[string]any{"autoscaling": off}},
		{
			name: "unset lists, labels and version",
			mutate: func(r *inputs.PoolRole) {
				r.MachinePool.Spec.FailureDomains = nil
				r.ClusterFailureDomains = nil
				r.MachinePool.Spec.Template.Labels = nil
				r.MachinePool.Spec.Template.Spec.Version = ""
				r.ClusterExports = nil
			},
			want: map[string]any{
				"failure_domains": []any{}, "cluster_failure_domains": []any{}, "node_labels": map[string]any{},
				"kubernetes_version": nil, "captf_cluster_outputs": map[string]any{},
			},
		},
		{
			name: "template values",
			want: map[string]any{
				"machinepool_name": "prod-workers", "kubernetes_version": "v1.37.2", "bootstrap_format": "ignition",
				"node_labels":             map[string]any{"node-role.example.com/worker": "", "tier": "general"},
				"failure_domains":         []any{"zone-a", "zone-b"},
				"cluster_failure_domains": []any{"zone-a", "zone-b", "zone-c"},
			},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r := poolRole()
			if tc.annotations != nil {
				r.MachinePool.Annotations = map[string]string{}
				if v, ok := tc.annotations["min"]; ok {
					r.MachinePool.Annotations["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"] = v
				}
				if v, ok := tc.annotations["max"]; ok {
					r.MachinePool.Annotations["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"] = v
				}
			}
			if tc.mutate != nil {
				tc.mutate(&r)
			}
			expect(t, render(t, r), tc.want)
		})
	}
}

func TestBootstrapBytesRoundTrip(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte("#cloud-config\nwrite_files: []\n"))
	_ = w.Close()
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	testCases := map[string][]byte{
		"gzip":         gz.Bytes(),
		"not UTF-8":    {0xff, 0xfe, 0x00, 0xc3, 0x28},
		"every byte":   all,
		"one byte":     {'a'},
		"two bytes":    {'a', 'b'},
		"html":         []byte("<script>&</script>"),
		"empty":        {},
		"large binary": bytes.Repeat(all, 1000),
	}
	for name, value := range testCases {
		t.Run(name, func(t *testing.T) {
			for _, in := range []inputs.RoleInputs{
				func() inputs.RoleInputs { r := machineRole(); r.Bootstrap.Value = value; return r }(),
				func() inputs.RoleInputs { r := poolRole(); r.Bootstrap.Value = value; return r }(),
			} {
				doc := render(t, in)
				got, err := base64.StdEncoding.DecodeString(doc["bootstrap_data"].(string))
				if err != nil {
					t.Fatalf("%s: bootstrap_data is not padded standard base64: %v", in.Role(), err)
				}
				if !bytes.Equal(got, value) {
					t.Errorf("%s: bootstrap bytes changed in transit", in.Role())
				}
			}
		})
	}
}

func TestRenderRefusals(t *testing.T) {
	testCases := []struct {
		name string
		in   inputs.RoleInputs
		is   error
	}{
		{"unknown bootstrap format", func() inputs.RoleInputs { r := machineRole(); r.Bootstrap.Format = "shell"; return r }(), inputs.ErrBootstrapFormat},
		{"invalid exports", func() inputs.RoleInputs { r := poolRole(); r.ClusterExports = json.RawMessage(`{"a":`); return r }(), inputs.ErrExportsInvalid},
		{"no Cluster", func() inputs.RoleInputs { r := clusterRole(); r.Cluster = nil; return r }(), nil},
		{"no Machine", func() inputs.RoleInputs { r := machineRole(); r.Machine = nil; return r }(), nil},
		{"no TerraformMachinePool", func() inputs.RoleInputs { r := poolRole(); r.Infra = nil; return r }(), nil},
		{"kind of another role", func() inputs.RoleInputs { r := machineRole(); r.Common.Object.Kind = "TerraformCluster"; return r }(), nil},
		{"no Cluster name", func() inputs.RoleInputs { r := clusterRole(); r.Common.Cluster.Name = ""; return r }(), nil},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.in.Tfvars()
			if err == nil {
				t.Fatal("rendered")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want %v", err, tc.is)
			}
			if strings.Contains(err.Error(), "kubeadm") {
				t.Error("the error quotes bootstrap data")
			}
		})
	}
}

// expect compares selected keys of a rendered document.
func expect(t *testing.T, doc, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got, ok := doc[k]
		if !ok {
			t.Errorf("%s missing", k)
			continue
		}
		if !reflect.DeepEqual(got, v) {
			t.Errorf("%s = %#v, want %#v", k, got, v)
		}
	}
}
