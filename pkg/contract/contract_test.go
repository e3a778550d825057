package contract_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"captf.io/captf/pkg/contract"
)

func load(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func encode(t *testing.T, doc map[string]any) []byte {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestValidDocumentsOfEveryRolePass(t *testing.T) {
	for _, role := range contract.Roles {
		t.Run(string(role), func(t *testing.T) {
			if err := contract.ValidateInputs(role, encode(t, load(t, string(role)+"-inputs.json"))); err != nil {
				t.Errorf("inputs: %v", err)
			}
			if err := contract.ValidateOutputs(role, encode(t, load(t, string(role)+"-outputs.json"))); err != nil {
				t.Errorf("outputs: %v", err)
			}
		})
	}
}

const secret = "c2VjcmV0LWJvb3RzdHJhcC10b2tlbi0xMjM0NQ==!!"

func TestViolationsNameThePathAndNeverTheValue(t *testing.T) {
	testCases := []struct {
		name   string
		role   contract.Role
		side   string
		change func(doc map[string]any)
		want   []string
	}{
		{"missing contract input", contract.RoleCluster, "inputs", func(d map[string]any) { delete(d, "control_plane_initialized") },
			[]string{"(document)", "control_plane_initialized"}},
		{"extra input", contract.RoleCluster, "inputs", func(d map[string]any) { d["region"] = "eu-1" },
			[]string{"has properties the schema does not define: region"}},
		{"wrong kind for the role", contract.RoleCluster, "inputs", func(d map[string]any) {
			d["captf_object"].(map[string]any)["kind"] = "TerraformMachine"
		}, []string{"/captf_object/kind", "TerraformCluster"}},
		{"tag key with a slash is pointer-escaped", contract.RoleMachine, "inputs", func(d map[string]any) {
			d["captf_tags"].(map[string]any)["captf.io/managed-by"] = "someone"
		}, []string{"/captf_tags/captf.io~1managed-by", "captf"}},
		{"bootstrap data not base64", contract.RoleMachine, "inputs", func(d map[string]any) { d["bootstrap_data"] = secret },
			[]string{"/bootstrap_data", "does not match the pattern"}},
		{"endpoint port out of range", contract.RoleCluster, "outputs", func(d map[string]any) {
			d["control_plane_endpoint"] = map[string]any{"host": "10.0.0.1", "port": 70000}
		}, []string{"/control_plane_endpoint"}},
		{"missing health", contract.RoleMachine, "outputs", func(d map[string]any) { delete(d, "health") },
			[]string{"(document)", "health"}},
		{"bad health state", contract.RoleMachinePool, "outputs", func(d map[string]any) {
			d["health"] = map[string]any{"state": "melting", "healthy": false}
		}, []string{"/health/state"}},
		{"bad address type", contract.RoleMachine, "outputs", func(d map[string]any) {
			d["addresses"] = []any{map[string]any{"type": "PublicIP", "address": secret}}
		}, []string{"/addresses/0/type"}},
		{"instance without provider id", contract.RoleMachinePool, "outputs", func(d map[string]any) {
			d["instances"] = []any{map[string]any{"instance_id": secret}}
		}, []string{"/instances/0", "provider_id"}},
		{"replicas negative in inputs", contract.RoleMachinePool, "inputs", func(d map[string]any) { d["replicas"] = -1 },
			[]string{"/replicas"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			doc := load(t, string(tc.role)+"-"+tc.side+".json")
			tc.change(doc)
			validate := contract.ValidateInputs
			if tc.side == "outputs" {
				validate = contract.ValidateOutputs
			}
			err := validate(tc.role, encode(t, doc))
			var verr *contract.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("want a *ValidationError, got %v", err)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the error does not name %q: %s", w, msg)
				}
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "c2VjcmV0") {
				t.Errorf("the error quotes the value: %s", msg)
			}
		})
	}
}

func TestRoleForKind(t *testing.T) {
	for kind, want := range map[string]contract.Role{
		"TerraformCluster": contract.RoleCluster, "TerraformMachine": contract.RoleMachine, "TerraformMachinePool": contract.RoleMachinePool,
	} {
		if got, err := contract.RoleForKind(kind); err != nil || got != want {
			t.Errorf("RoleForKind(%s) = %q, %v", kind, got, err)
		}
	}
	if _, err := contract.RoleForKind("TerraformPlan"); err == nil {
		t.Error("TerraformPlan has no role")
	}
}

func TestNotJSONIsRejectedWithoutEcho(t *testing.T) {
	err := contract.ValidateInputs(contract.RoleMachine, []byte(`{"bootstrap_data": "`+secret))
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("want an error without the value, got %v", err)
	}
}

func TestContractNames(t *testing.T) {
	testCases := []struct {
		role    contract.Role
		inputs  string
		outputs string
	}{
		{contract.RoleCluster,
			"captf_cluster captf_contract captf_object captf_tags cluster_network control_plane_endpoint control_plane_initialized kubernetes_version",
			"control_plane_endpoint exports failure_domains health"},
		{contract.RoleMachine,
			"bootstrap_data bootstrap_format captf_cluster captf_cluster_outputs captf_contract captf_object captf_tags control_plane failure_domain kubernetes_version machine_name",
			"addresses failure_domain health interruptible provider_id"},
		{contract.RoleMachinePool,
			"autoscaling bootstrap_data bootstrap_format captf_cluster captf_cluster_outputs captf_contract captf_object captf_tags cluster_failure_domains failure_domains kubernetes_version machinepool_name node_labels replicas",
			"health instances provider_id provider_id_list replicas"},
	}
	for _, tc := range testCases {
		in, err := contract.InputNames(tc.role)
		if err != nil || strings.Join(in, " ") != tc.inputs {
			t.Errorf("%s inputs %v, %v", tc.role, in, err)
		}
		out, err := contract.OutputNames(tc.role)
		if err != nil || strings.Join(out, " ") != tc.outputs {
			t.Errorf("%s outputs %v, %v", tc.role, out, err)
		}
	}
}

func TestNullableInputs(t *testing.T) {
	for role, want := range map[contract.Role]string{
		contract.RoleCluster:     "captf_cluster_outputs cluster_network control_plane_endpoint kubernetes_version",
		contract.RoleMachine:     "captf_cluster_outputs failure_domain kubernetes_version",
		contract.RoleMachinePool: "captf_cluster_outputs kubernetes_version",
	} {
		got, err := contract.NullableInputs(role)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		if strings.Join(names, " ") != want {
			t.Errorf("%s nullable inputs %v, want %s", role, names, want)
		}
	}
}

func TestNormalizeOutputs(t *testing.T) {
	got, err := contract.NormalizeOutputs(contract.RoleMachinePool, map[string]json.RawMessage{
		"provider_id_list": json.RawMessage(`[]`), "replicas": json.RawMessage(`0`), "instances": json.RawMessage(`[]`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(got["provider_id"]) != "null" {
		t.Errorf("absent nullable provider_id = %s, want null", got["provider_id"])
	}
	if _, ok := got["health"]; ok {
		t.Error("health may not be null: it must stay absent")
	}
	if err := contract.ValidateOutputs(contract.RoleMachinePool, encodeRaw(t, got)); err == nil || !strings.Contains(err.Error(), "health") {
		t.Errorf("validation must report the missing health output, got %v", err)
	}
	got, _ = contract.NormalizeOutputs(contract.RoleMachine, map[string]json.RawMessage{"provider_id": json.RawMessage(`""`)})
	if string(got["provider_id"]) != "null" {
		t.Errorf("an empty provider_id = %s, want null", got["provider_id"])
	}
}

func encodeRaw(t *testing.T, m map[string]json.RawMessage) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A schema from an image is checked without quoting the values, and
// fetches nothing outside itself.
func TestSchemaViolations(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"size":{"type":"string","pattern":"^(small|large)$"},"count":{"type":"integer","maximum":3},` +
		`"port":{"type":"number","minimum":1024},"step":{"multipleOf":5},"name":{"minLength":20}},"required":["size"]}`)
	got, err := contract.SchemaViolations(schema, []byte(`{"size":"secret-value-81c2","count":98127,"port":81271,"step":81277,"name":"secret-name-66a1"}`))
	if err != nil || len(got) != 4 || got[0].Path != "/count" || got[3].Path != "/step" {
		t.Fatalf("violations %+v, %v", got, err)
	}
	for _, v := range got {
		for _, secret := range []string{"secret-value-81c2", "98127", "81277", "secret-name-66a1", "16"} {
			if strings.Contains(v.Message, secret) {
				t.Errorf("the violation of %s quotes the value (or its length): %s", v.Path, v.Message)
			}
		}
	}
	if got, err := contract.SchemaViolations(schema, []byte(`{"size":"small"}`)); err != nil || len(got) != 0 {
		t.Fatalf("a valid document: %+v, %v", got, err)
	}
	if _, err := contract.SchemaViolations([]byte(`{"$ref":"file:///etc/hostname"}`), []byte(`{}`)); err == nil {
		t.Error("a schema referring to a local file compiled")
	}
	if _, err := contract.SchemaViolations([]byte(`{"type":`), []byte(`{}`)); err == nil {
		t.Error("a schema that is not JSON was used")
	}
}
