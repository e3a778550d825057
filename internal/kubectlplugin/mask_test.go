package kubectlplugin

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const stateJSON = `{
  "version": 4,
  "terraform_version": "1.12.6",
  "serial": 3,
  "lineage": "5b0f",
  "outputs": {
    "endpoint": {
      "value": {"host": "10.0.0.1", "port": 6443},
      "type": ["object", {"host": "string", "port": "number"}]
    },
    "kubeconfig": {
      "value": "apiVersion: v1\nusers: [{token: s3cr3t-t0ken}]",
      "type": "string",
      "sensitive": true
    },
    "nested": {
      "sensitive": true,
      "value": {"password": "hunter2-hunter2", "list": [1, 2, {"x": "y"}]},
      "type": "dynamic"
    }
  },
  "resources": [{"mode": "managed", "type": "null_resource", "name": "x", "provider": "provider[\"registry.opentofu.org/hashicorp/null\"]", "instances": []}],
  "check_results": null
}
`

func TestMaskKeepsEveryByteButSensitiveValues(t *testing.T) {
	got, err := maskSensitiveOutputs([]byte(stateJSON))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cr3t-t0ken", "hunter2-hunter2"} {
		if bytes.Contains(got, []byte(secret)) {
			t.Errorf("the masked state still holds %q", secret)
		}
	}
	want := strings.Replace(stateJSON, `"apiVersion: v1\nusers: [{token: s3cr3t-t0ken}]"`, `"(sensitive)"`, 1)
	want = strings.Replace(want, `{"password": "hunter2-hunter2", "list": [1, 2, {"x": "y"}]}`, `"(sensitive)"`, 1)
	if string(got) != want {
		t.Errorf("masked state:\n%s\nwant:\n%s", got, want)
	}
	if !json.Valid(got) {
		t.Error("the masked state is not valid JSON")
	}
}

func TestWrittenBy(t *testing.T) {
	if got := writtenBy([]byte(stateJSON), 1); got != "OpenTofu 1.12.6" {
		t.Errorf("writtenBy = %q", got)
	}
	tf := strings.ReplaceAll(stateJSON, "registry.opentofu.org", "registry.terraform.io")
	if got := writtenBy([]byte(tf), 1); got != "Terraform 1.12.6" {
		t.Errorf("writtenBy = %q", got)
	}
	empty := `{"version":4,"terraform_version":"1.8.5","resources":[]}`
	if got := writtenBy([]byte(empty), 2); got != "Terraform 1.8.5" {
		t.Errorf("a chunked state is Terraform's: %q", got)
	}
}

func FuzzMask(f *testing.F) {
	f.Add([]byte(stateJSON))
	f.Add([]byte(`{"outputs":{"a":{"sensitive":true,"value":1}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := maskSensitiveOutputs(raw)
		if err == nil && json.Valid(raw) && !json.Valid(out) {
			t.Fatalf("masking valid JSON gave invalid JSON: %q -> %q", raw, out)
		}
	})
}
