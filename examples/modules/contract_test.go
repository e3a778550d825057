// Package modules_test runs the example modules with the real runner and
// both runtimes, and checks them against the module contract: inputs
// rendered for the role validate against the contract's schema, the
// outputs read back from the real state validate too, and a second apply
// changes nothing.
package modules_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"

	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/runnertest"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

func common(kind, name string) map[string]any {
	return map[string]any{
		"captf_contract": contract.Version,
		"captf_cluster":  map[string]any{"name": "demo", "namespace": "default"},
		"captf_object":   map[string]any{"kind": kind, "name": name, "namespace": "default"},
		"captf_tags": map[string]any{
			"captf.io/cluster": "demo", "captf.io/namespace": "default", "captf.io/kind": kind,
			"captf.io/name": name, "captf.io/managed-by": "captf", "captf.io/template": "",
		},
	}
}

func with(base map[string]any, extra map[string]any) map[string]any {
	for k, v := range extra {
		base[k] = v
	}
	return base
}

var bootstrap = base64.StdEncoding.EncodeToString([]byte("#cloud-config\nruncmd: [echo joined]\n"))

var exports = map[string]any{"cluster_id": "fond-lark", "network_id": "123", "region": "noop-local"}

var testCases = []struct {
	module, kind string
	role         contract.Role
	tfvars       map[string]any
	check        func(t *testing.T, outputs map[string]json.RawMessage)
}{
	{"noop-cluster", "TerraformCluster", contract.RoleCluster, with(common("TerraformCluster", "demo"), map[string]any{
		"control_plane_endpoint": nil, "kubernetes_version": nil, "control_plane_initialized": false,
		"cluster_network": map[string]any{"pods": []string{"192.168.0.0/16"}, "services": []string{}, "service_domain": nil, "api_server_port": 6443},
	}), func(t *testing.T, o map[string]json.RawMessage) {
		var ep struct {
			Host string
			Port int
		}
		if json.Unmarshal(o["control_plane_endpoint"], &ep) != nil || ep.Host == "" || ep.Port != 6443 {
			t.Errorf("control_plane_endpoint %s", o["control_plane_endpoint"])
		}
	}},
	{"noop-machine", "TerraformMachine", contract.RoleMachine, with(common("TerraformMachine", "demo-cp-0"), map[string]any{
		"captf_cluster_outputs": exports, "machine_name": "demo-cp-0", "bootstrap_data": bootstrap,
		"bootstrap_format": "cloud-config", "failure_domain": nil, "kubernetes_version": "v1.34.1", "control_plane": true,
	}), func(t *testing.T, o map[string]json.RawMessage) {
		var id string
		if json.Unmarshal(o["provider_id"], &id) != nil || id == "" {
			t.Errorf("provider_id %s", o["provider_id"])
		}
	}},
	{"noop-machinepool", "TerraformMachinePool", contract.RoleMachinePool, with(common("TerraformMachinePool", "demo-workers"), map[string]any{
		"captf_cluster_outputs": exports, "machinepool_name": "demo-workers", "replicas": 3, "bootstrap_data": bootstrap,
		"bootstrap_format": "cloud-config", "failure_domains": []string{}, "cluster_failure_domains": []string{"noop-a", "noop-b"},
		"kubernetes_version": nil, "node_labels": map[string]string{"role": "worker"},
		"autoscaling": map[string]any{"enabled": false, "min": 0, "max": 0},
	}), func(t *testing.T, o map[string]json.RawMessage) {
		var ids []string
		var replicas int
		if json.Unmarshal(o["provider_id_list"], &ids) != nil || json.Unmarshal(o["replicas"], &replicas) != nil || len(ids) != 3 || replicas != 3 {
			t.Errorf("provider_id_list %s, replicas %s: want 3 instances from replicas 3", o["provider_id_list"], o["replicas"])
		}
	}},
}

func TestExampleModulesKeepTheContract(t *testing.T) {
	for _, tc := range testCases {
		for _, rt := range runnertest.Runtimes {
			t.Run(tc.module+"/"+rt, func(t *testing.T) {
				tfvars := runnertest.MustJSON(t, tc.tfvars)
				if err := contract.ValidateInputs(tc.role, tfvars); err != nil {
					t.Fatalf("the test's inputs break the contract: %v", err)
				}
				root, err := inputs.Root(tc.role, nil)
				if err != nil {
					t.Fatal(err)
				}
				f := runnertest.New(t, env, rt, tc.module, tc.kind)
				f.SetInputs(root, tc.tfvars)
				res, code := f.Run(runner.OpApply, nil)
				if code != runner.ExitOK {
					t.Fatalf("apply failed: %+v", res.Error)
				}
				st, err := state.Decode(f.Suffix, f.StateSecrets())
				if err != nil {
					t.Fatal(err)
				}
				outputs := map[string]json.RawMessage{}
				for name, o := range st.Outputs {
					if !o.Sensitive {
						t.Errorf("output %s is not re-exported sensitive", name)
					}
					outputs[name] = o.Value
				}
				if outputs, err = contract.NormalizeOutputs(tc.role, outputs); err != nil {
					t.Fatal(err)
				}
				if err := contract.ValidateOutputs(tc.role, runnertest.MustJSON(t, outputs)); err != nil {
					t.Errorf("the outputs break the contract: %v", err)
				}
				tc.check(t, outputs)

				res, code = f.Run(runner.OpApply, nil)
				if code != runner.ExitOK || res.Changes == nil || res.Changes.Add+res.Changes.Change+res.Changes.Destroy != 0 {
					t.Errorf("a second apply of the same inputs changed something: %+v, %+v", res.Changes, res.Error)
				}
			})
		}
	}
}
