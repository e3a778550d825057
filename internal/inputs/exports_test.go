package inputs

import (
	"bytes"
	"testing"
)

func TestExportsHashIgnoresFormatting(t *testing.T) {
	a := []byte(`{"captf_cluster_outputs": {"network_id": "n-1", "zones": ["a", "b"]}, "replicas": 2}`)
	b := []byte(`{"replicas":3,"captf_cluster_outputs":{"network_id":"n-1","zones":["a","b"]}}`)
	c := []byte(`{"replicas":2,"captf_cluster_outputs":{"network_id":"n-2","zones":["a","b"]}}`)
	if ExportsHash(a) == "" || ExportsHash(a) != ExportsHash(b) {
		t.Errorf("the same exports hash differently: %q vs %q", ExportsHash(a), ExportsHash(b))
	}
	if ExportsHash(a) == ExportsHash(c) {
		t.Error("other exports hash the same")
	}
	if ExportsHash([]byte(`{"replicas":2}`)) != "" || ExportsHash([]byte(`not json`)) != "" {
		t.Error("tfvars without exports must hash to \"\"")
	}
}

func TestWithExportsReplacesOnlyTheExports(t *testing.T) {
	role := []byte(`{"bootstrap_data":"new-token","captf_cluster_outputs":{"network_id":"n-2"},"replicas":2}`)
	held := Exports([]byte(`{"captf_cluster_outputs":{"network_id":"n-1"}}`))
	got, err := WithExports(role, held)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Exports(got), held) {
		t.Errorf("rendered exports %s, want %s", Exports(got), held)
	}
	if !bytes.Contains(got, []byte(`"bootstrap_data":"new-token"`)) || !bytes.Contains(got, []byte(`"replicas":2`)) {
		t.Errorf("WithExports changed other inputs: %s", got)
	}
	if _, err := WithExports([]byte(`{"replicas":2}`), held); err == nil {
		t.Error("tfvars without exports: want an error")
	}
}

func TestWithExportsKeepsTheExportsHash(t *testing.T) {
	applied := []byte(`{"captf_cluster_outputs":{"endpoint":"https://a.example?x=1&y=<2>"}}`)
	role := []byte(`{"bootstrap_data":"b","captf_cluster_outputs":{"endpoint":"https://b.example"}}`)
	got, err := WithExports(role, Exports(applied))
	if err != nil {
		t.Fatal(err)
	}
	if ExportsHash(got) != ExportsHash(applied) {
		t.Errorf("held rendering %s hashes %s, the applied exports %s", got, ExportsHash(got), ExportsHash(applied))
	}
	escaped := []byte(`{"captf_cluster_outputs":{"endpoint":"https://a.example?x=1\u0026y=\u003c2\u003e"}}`)
	if ExportsHash(escaped) != ExportsHash(applied) {
		t.Error("the same exports, escaped differently, hash differently")
	}
}
