package scale_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// A state as the runtimes write it: version 4, Terraform's member order,
// two-space indentation, gzipped by the kubernetes backend into the data
// key of a labelled Secret.

type tfState struct {
	Version          int                 `json:"version"`
	TerraformVersion string              `json:"terraform_version"`
	Serial           int64               `json:"serial"`
	Lineage          string              `json:"lineage"`
	Outputs          map[string]tfOutput `json:"outputs"`
	Resources        []tfResource        `json:"resources"`
	CheckResults     any                 `json:"check_results"`
}

type tfOutput struct {
	Value     any  `json:"value"`
	Type      any  `json:"type"`
	Sensitive bool `json:"sensitive,omitempty"`
}

type tfResource struct {
	Mode      string       `json:"mode"`
	Type      string       `json:"type"`
	Name      string       `json:"name"`
	Provider  string       `json:"provider"`
	Instances []tfInstance `json:"instances"`
}

type tfInstance struct {
	IndexKey            int            `json:"index_key"`
	SchemaVersion       int            `json:"schema_version"`
	Attributes          map[string]any `json:"attributes"`
	SensitiveAttributes []any          `json:"sensitive_attributes"`
	Private             string         `json:"private"`
}

// machineOutputs are the machine contract's outputs of a running, healthy
// machine: provider ID, addresses, failure domain, interruptible, health.
func machineOutputs(name, failureDomain string) map[string]tfOutput {
	addr := []any{"tuple", []any{
		[]any{"object", map[string]any{"address": "string", "type": "string"}},
		[]any{"object", map[string]any{"address": "string", "type": "string"}},
	}}
	return map[string]tfOutput{
		"provider_id": {Value: "scale:///" + failureDomain + "/" + name, Type: "string"},
		"addresses": {Value: []any{
			map[string]any{"type": "InternalIP", "address": "10.0.0.1"},
			map[string]any{"type": "Hostname", "address": name},
		}, Type: addr},
		"failure_domain": {Value: failureDomain, Type: "string"},
		"interruptible":  {Value: false, Type: "bool"},
		"health":         healthOutput(),
	}
}

// clusterOutputs are the cluster contract's outputs of a provisioned,
// healthy cluster.
func clusterOutputs(endpointHost string, endpointPort int32, failureDomain string) map[string]tfOutput {
	return map[string]tfOutput{
		"control_plane_endpoint": {Value: map[string]any{"host": endpointHost, "port": endpointPort},
			Type: []any{"object", map[string]any{"host": "string", "port": "number"}}},
		"failure_domains": {Value: []any{map[string]any{"name": failureDomain, "control_plane": true}},
			Type: []any{"tuple", []any{[]any{"object", map[string]any{"name": "string", "control_plane": "bool"}}}}},
		"exports": {Value: map[string]any{"network_id": "net-scale", "subnet_ids": []any{"subnet-a"}},
			Type: []any{"object", map[string]any{"network_id": "string", "subnet_ids": []any{"tuple", []any{"string"}}}}},
		"health": healthOutput(),
	}
}

func healthOutput() tfOutput {
	return tfOutput{Value: map[string]any{"state": "running", "healthy": true, "message": "running", "reasons": []any{}},
		Type: []any{"object", map[string]any{"state": "string", "healthy": "bool", "message": "string", "reasons": []any{"tuple", []any{}}}}}
}

// stateJSON renders a state with the outputs and a padding resource of
// instances instances, drawn from seed. An instance looks like a cloud
// resource's: IDs, an ARN, tags, and a base64 blob (a certificate or
// user data) that compresses badly, so a gzipped state is about a third
// of its JSON, in the range real states show.
func stateJSON(seed uint64, outputs map[string]tfOutput, instances int) ([]byte, error) {
	r := rand.New(rand.NewPCG(seed, 0x5ca1e))
	hexOf := func(n int) string {
		b := make([]byte, (n+1)/2)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return hex.EncodeToString(b)[:n]
	}
	blob := make([]byte, 192)
	pad := tfResource{Mode: "managed", Type: "terraform_data", Name: "padding", Provider: `provider["terraform.io/builtin/terraform"]`}
	for i := range instances {
		for j := range blob {
			blob[j] = byte(r.UintN(256))
		}
		id := "i-" + hexOf(17)
		pad.Instances = append(pad.Instances, tfInstance{IndexKey: i, Attributes: map[string]any{
			"id":               id,
			"arn":              "arn:aws:ec2:us-east-1:123456789012:instance/" + id,
			"input":            map[string]any{"value": base64.StdEncoding.EncodeToString(blob), "type": "string"},
			"output":           nil,
			"tags":             map[string]any{"Name": "scale-" + hexOf(8), "captf.io/managed-by": "captf", "Environment": "benchmark"},
			"triggers_replace": nil,
		}, SensitiveAttributes: []any{}, Private: "bnVsbA=="})
	}
	doc := tfState{Version: 4, TerraformVersion: "1.12.6", Serial: 3, Lineage: fmt.Sprintf("%08x-5ca1-4e00-8000-%012x", seed, seed),
		Outputs: outputs, Resources: []tfResource{pad}, CheckResults: nil}
	return json.MarshalIndent(doc, "", "  ")
}

func gzipped(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzippedState is stateJSON, gzipped as the backend stores it.
func gzippedState(seed uint64, outputs map[string]tfOutput, instances int) ([]byte, error) {
	raw, err := stateJSON(seed, outputs, instances)
	if err != nil {
		return nil, err
	}
	return gzipped(raw)
}

// instancesFor returns how many padding instances make a gzipped state of
// about target bytes, measured on a sample state with outputs.
func instancesFor(target int, outputs map[string]tfOutput) (int, error) {
	const sample = 64
	base, err := gzippedState(1, outputs, 0)
	if err != nil {
		return 0, err
	}
	some, err := gzippedState(1, outputs, sample)
	if err != nil {
		return 0, err
	}
	per := float64(len(some)-len(base)) / sample
	return max(0, int(float64(target-len(base))/per+0.5)), nil
}

// stateSecret is the base state Secret the kubernetes backend writes for
// an object of kind in cluster, after a successful apply whose inputs hash
// the runner annotated.
func stateSecret(namespace, kind, name, cluster, inputsHash string, data []byte) (*corev1.Secret, error) {
	suffix, err := state.Suffix(namespace, kind, name)
	if err != nil {
		return nil, err
	}
	l := state.OwnerLabels(kind, name, cluster)
	l[state.LabelState] = "true"
	l[state.LabelSecretSuffix] = suffix
	l[state.LabelWorkspace] = state.Workspace
	l[state.LabelManagedBy] = state.ManagedByTerraform
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: state.SecretName(suffix), Labels: l,
			Annotations: map[string]string{state.AnnotationEncoding: state.EncodingGzip, infrav1.InputsHashAnnotation: inputsHash}},
		Data: map[string][]byte{state.DataKey: data},
	}, nil
}

// fakeInputsHash is an h2 inputs hash for a machine: a machine never
// re-applies, so its value only has to be well formed.
func fakeInputsHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "h2:" + hex.EncodeToString(sum[:])
}
