package outputs_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"captf.io/captf/pkg/state"
)

// absent in a change list removes the output, as a null root output is
// never stored in state.
const absent = "\x00absent"

// Valid outputs per role, as JSON values.
var (
	clusterBase = map[string]string{
		"control_plane_endpoint": `{"host":"api.example.test","port":6443}`,
		"failure_domains":        `[{"name":"zone-a","control_plane":false,"attributes":{"zone":"a"}},{"name":"zone-b"}]`,
		"exports":                `{"cluster_id":"c-1","subnets":["s-1","s-2"]}`,
		"health":                 `{"state":"running","healthy":true,"message":null,"reasons":[]}`,
	}
	machineBase = map[string]string{
		"provider_id":    `"aws:///zone-a/i-1"`,
		"addresses":      `[{"type":"Hostname","address":"n1"},{"type":"InternalIP","address":"10.0.0.9"},{"type":"InternalIP","address":"10.0.0.10"}]`,
		"failure_domain": `"zone-a"`,
		"interruptible":  `false`,
		"health":         `{"state":"running","healthy":true}`,
	}
	poolBase = map[string]string{
		"provider_id_list": `["p://b","p://a"]`,
		"replicas":         `2`,
		"instances":        `[{"provider_id":"p://a"},{"provider_id":"p://b","instance_id":"b","state":"running"}]`,
		"health":           `{"state":"running","healthy":true}`,
	}
)

// outs builds state outputs from base with changes applied.
func outs(base, changes map[string]string) map[string]state.Output {
	values := maps.Clone(base)
	for k, v := range changes {
		if v == absent {
			delete(values, k)
			continue
		}
		values[k] = v
	}
	out := map[string]state.Output{}
	for k, v := range values {
		out[k] = state.Output{Value: json.RawMessage(v), Type: json.RawMessage(`"dynamic"`), Sensitive: true}
	}
	return out
}

// stateOutputs reads testdata/state/<name>.json: the "outputs" object of a
// state OpenTofu wrote (see testdata/README.md).
func stateOutputs(t *testing.T, name string) map[string]state.Output {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "state", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]struct {
		Value     json.RawMessage `json:"value"`
		Type      json.RawMessage `json:"type"`
		Sensitive bool            `json:"sensitive"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]state.Output{}
	for k, o := range raw {
		out[k] = state.Output{Value: o.Value, Type: o.Type, Sensitive: o.Sensitive}
	}
	return out
}

// repeat builds a JSON list of n copies of item.
func repeat(item string, n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
}

// wantCondition checks status and reason, and that the message holds
// every fragment.
func wantCondition(t *testing.T, got metav1.Condition, status metav1.ConditionStatus, reason string, fragments ...string) {
	t.Helper()
	if got.Status != status || got.Reason != reason {
		t.Errorf("condition %s = %s/%s (%q), want %s/%s", got.Type, got.Status, got.Reason, got.Message, status, reason)
	}
	for _, f := range fragments {
		if !strings.Contains(got.Message, f) {
			t.Errorf("condition %s message %q lacks %q", got.Type, got.Message, f)
		}
	}
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func equalJSON(a, b any) bool { return jsonOf(a) == jsonOf(b) }
