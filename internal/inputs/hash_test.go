package inputs_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
)

const image = "ghcr.io/example/pool:0.4.1"

// testKey is an object's plan key.
var testKey = bytes.Repeat([]byte{0x5a}, inputs.MinKeyBytes)

func mustHash(t *testing.T, approval bool, in inputs.RoleInputs, vars map[string]json.RawMessage, sensitive map[string]bool) string {
	t.Helper()
	data, err := in.Tfvars()
	if err != nil {
		t.Fatal(err)
	}
	f := inputs.Hash
	if approval {
		f = inputs.ApprovalHash
	}
	h, err := f(testKey, in.Role(), image, data, vars, sensitive)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "h3:") || len(h) != 3+64 {
		t.Fatalf("hash %q is not h3:<hmac-sha256 hex>", h)
	}
	return h
}

func TestHashEncodingIsTheDocumentedOne(t *testing.T) {
	tfvars := []byte(`{"captf_contract":"v1alpha1", "machine_name":"m\u0041\n", "control_plane":false, "captf_cluster_outputs":{"b":[1,-0],"a":null}}`)
	preimage := `{"contract":"v1alpha1","image":"reg/img:1","inputs":{"captf_cluster_outputs":{"a":null,"b":[1,0]},"captf_contract":"v1alpha1","control_plane":false,"machine_name":"mA\u000a"},"role":"machine","scheme":"h2"}`
	sum := sha256.Sum256([]byte(preimage))
	got, err := inputs.Digest(contract.RoleMachine, "reg/img:1", tfvars, nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := "h2:" + hex.EncodeToString(sum[:]); got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
	for _, empty := range []map[string]json.RawMessage{{}, nil} {
		// An object without variables hashes as before variables existed,
		// whatever the sensitivity map says.
		if again, _ := inputs.Digest(contract.RoleMachine, "reg/img:1", tfvars, empty, map[string]bool{"key": true}, false); again != got {
			t.Errorf("no variables hash %s, want %s", again, got)
		}
	}
	vars := map[string]json.RawMessage{"size": json.RawMessage(`"40"`), "key": json.RawMessage(`{"z":1,"a":"<&>"}`)}
	withVars := preimage[:len(preimage)-1] + `,"variables":{"key":{"sensitive":true,"value":{"a":"<&>","z":1}},"size":{"sensitive":false,"value":"40"}}}`
	sum = sha256.Sum256([]byte(withVars))
	got, err = inputs.Digest(contract.RoleMachine, "reg/img:1", tfvars, vars, map[string]bool{"key": true}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := "h2:" + hex.EncodeToString(sum[:]); got != want {
		t.Errorf("hash with variables %s, want %s", got, want)
	}
}

func TestHashChanges(t *testing.T) {
	base := poolRole()
	vars := map[string]json.RawMessage{"size": json.RawMessage(`"m5.large"`), "key": json.RawMessage(`"k"`)}
	sens := map[string]bool{"key": true}
	baseHash := mustHash(t, false, base, vars, sens)

	testCases := []struct {
		name      string
		mutate    func(r *inputs.PoolRole)
		image     string
		vars      map[string]json.RawMessage
		sensitive map[string]bool
		same      bool
	}{
		{name: "nothing changed", same: true},
		{name: "image", image: "ghcr.io/example/pool:0.4.2"},
		{name: "image as written, not resolved", image: "ghcr.io/example/pool:0.4.1@sha256:" + strings.Repeat("a", 64)},
		{name: "exports", mutate: func(r *inputs.PoolRole) { r.ClusterExports = json.RawMessage(`{"network_id":"net-43"}`) }},
		{name: "exports key order", mutate: func(r *inputs.PoolRole) {
			r.ClusterExports = json.RawMessage(`{"ports":[6443,10250],"note":"a<b && c>d","subnets":{"zone-a":"sub-1"},"network_id":"net-42"}`)
		}, same: true},
		{name: "bootstrap data", mutate: func(r *inputs.PoolRole) { r.Bootstrap.Value = []byte("rotated token") }},
		{name: "node labels", mutate: func(r *inputs.PoolRole) { r.MachinePool.Spec.Template.Labels["tier"] = "gpu" }},
		{name: "failure domains", mutate: func(r *inputs.PoolRole) { r.MachinePool.Spec.FailureDomains = []string{"zone-a"} }},
		{name: "cluster failure domains", mutate: func(r *inputs.PoolRole) { r.ClusterFailureDomains = nil }},
		{name: "template annotation", mutate: func(r *inputs.PoolRole) { r.Common.Template = "tmpl" }},
		{name: "autoscaling bounds", mutate: func(r *inputs.PoolRole) {
			r.MachinePool.Annotations["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"] = "11"
		}},
		{name: "replicas while autoscaling", mutate: func(r *inputs.PoolRole) { r.Infra.Status.Replicas = ptr.To[int32](7) }, same: true},
		{name: "spec replicas while autoscaling", mutate: func(r *inputs.PoolRole) { r.MachinePool.Spec.Replicas = ptr.To[int32](9) }, same: true},
		{name: "metadata that is not an input", mutate: func(r *inputs.PoolRole) {
			r.MachinePool.UID, r.MachinePool.Generation, r.Infra.Labels = "uid-2", 99, map[string]string{"x": "y"}
		}, same: true},
		{name: "variable value", vars: map[string]json.RawMessage{"size": json.RawMessage(`"m5.xlarge"`), "key": json.RawMessage(`"k"`)}},
		{name: "variable value type", vars: map[string]json.RawMessage{"size": json.RawMessage(`"m5.large"`), "key": json.RawMessage(`["k"]`)}},
		{name: "variable added", vars: map[string]json.RawMessage{"size": json.RawMessage(`"m5.large"`), "key": json.RawMessage(`"k"`), "x": json.RawMessage(`null`)}},
		{name: "variable spacing", vars: map[string]json.RawMessage{"size": json.RawMessage(` "m5.large" `), "key": json.RawMessage("\"\\u006b\"")}, same: true},
		{name: "sensitivity", sensitive: map[string]bool{}},
		{name: "sensitivity listed false", sensitive: map[string]bool{"key": true, "size": false}, same: true},
		{name: "no variables", vars: map[string]json.RawMessage{}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r := poolRole()
			if tc.mutate != nil {
				tc.mutate(&r)
			}
			img, v, s := image, vars, sens
			if tc.image != "" {
				img = tc.image
			}
			if tc.vars != nil {
				v = tc.vars
			}
			if tc.sensitive != nil {
				s = tc.sensitive
			}
			data, err := r.Tfvars()
			if err != nil {
				t.Fatal(err)
			}
			h, err := inputs.Hash(testKey, r.Role(), img, data, v, s)
			if err != nil {
				t.Fatal(err)
			}
			if (h == baseHash) != tc.same {
				t.Errorf("hash equal to the base: %v, want %v", h == baseHash, tc.same)
			}
		})
	}
}

func TestHashReplicasCountWithoutAutoscaling(t *testing.T) {
	r := poolRole()
	r.MachinePool.Annotations = nil
	before := mustHash(t, false, r, nil, nil)
	r.MachinePool.Spec.Replicas = ptr.To[int32](4)
	if mustHash(t, false, r, nil, nil) == before {
		t.Error("a replicas change without autoscaling kept the hash")
	}
	r.Infra.Status.Replicas = ptr.To[int32](8)
	after := mustHash(t, false, r, nil, nil)
	r.Infra.Status.Replicas = ptr.To[int32](1)
	if mustHash(t, false, r, nil, nil) != after {
		t.Error("observed replicas changed the hash of a pool without autoscaling")
	}
}

func TestApprovalHashIgnoresBootstrapData(t *testing.T) {
	r := poolRole()
	approval, inputsHash := mustHash(t, true, r, nil, nil), mustHash(t, false, r, nil, nil)
	if approval == inputsHash {
		t.Error("the approval hash equals the inputs hash")
	}
	r.Bootstrap.Value = []byte("a rotated bootstrap token")
	if mustHash(t, true, r, nil, nil) != approval {
		t.Error("a bootstrap change changed the approval hash")
	}
	if mustHash(t, false, r, nil, nil) == inputsHash {
		t.Error("a bootstrap change kept the inputs hash")
	}
	r.ClusterExports = json.RawMessage(`{"network_id":"net-99"}`)
	if mustHash(t, true, r, nil, nil) == approval {
		t.Error("an exports change kept the approval hash")
	}
}

func TestHashIsDeterministicAcrossMapOrders(t *testing.T) {
	vars := map[string]json.RawMessage{}
	sens := map[string]bool{}
	for _, n := range strings.Fields("a b c d e f g h i j k l m n o p") {
		vars[n] = json.RawMessage(`{"x":1,"y":[true,null],"z":"` + n + `"}`)
		sens[n] = n < "h"
	}
	want := mustHash(t, false, clusterRole(), vars, sens)
	for range 50 {
		copied := map[string]json.RawMessage{}
		for k, v := range vars {
			copied[k] = v
		}
		if mustHash(t, false, clusterRole(), copied, sens) != want {
			t.Fatal("the same inputs hashed differently")
		}
	}
}

func TestHashRejectsNonIntegers(t *testing.T) {
	testCases := []struct {
		name         string
		exports      string
		vars         map[string]json.RawMessage
		wantExports  bool
		wantVariable string
		wantPointer  string
	}{
		{name: "fraction in exports", exports: `{"price":0.5}`, wantExports: true, wantPointer: "/price"},
		{name: "exponent in exports", exports: `{"a":{"b":[1,2e3]}}`, wantExports: true, wantPointer: "/a/b/1"},
		{name: "integral but written as fraction", exports: `{"n":1.0}`, wantExports: true, wantPointer: "/n"},
		{name: "capital exponent", exports: `[1E2]`, wantExports: true, wantPointer: "/0"},
		{name: "fraction in a variable", exports: `{}`, vars: map[string]json.RawMessage{"ratio": json.RawMessage(`{"x":[0.25]}`)}, wantVariable: "ratio", wantPointer: "/x/0"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r := machineRole()
			r.ClusterExports = json.RawMessage(tc.exports)
			data, err := r.Tfvars()
			if err != nil {
				t.Fatal(err)
			}
			validate(t, r, data)
			for _, f := range []func([]byte, contract.Role, string, []byte, map[string]json.RawMessage, map[string]bool) (string, error){inputs.Hash, inputs.ApprovalHash} {
				_, err = f(testKey, r.Role(), image, data, tc.vars, nil)
				var ne *inputs.NumberError
				if !errors.As(err, &ne) || !errors.Is(err, inputs.ErrNonInteger) {
					t.Fatalf("error %v, want a NumberError", err)
				}
				if ne.FromExports() != tc.wantExports || ne.Variable != tc.wantVariable || ne.Pointer != tc.wantPointer {
					t.Errorf("error %+v", ne)
				}
				if tc.wantExports && err.Error() != "exports contains a fractional or exponent number; export numbers as integers or strings" {
					t.Errorf("message %q", err)
				}
			}
		})
	}
	t.Run("big integers are fine", func(t *testing.T) {
		r := machineRole()
		r.ClusterExports = json.RawMessage(`{"n":123456789012345678901234567890,"m":-7}`)
		mustHash(t, false, r, nil, nil)
	})
}

func TestHashRefusesWhatIsNotRoleInputs(t *testing.T) {
	r := machineRole()
	data, _ := r.Tfvars()
	testCases := map[string]struct {
		role   contract.Role
		tfvars []byte
		vars   map[string]json.RawMessage
	}{
		"the file with user variables": {contract.RoleMachine, append(bytes.TrimSuffix(bytes.TrimSpace(data), []byte("}")), []byte(`,"size":"x"}`)...), nil},
		"another role's inputs":        {contract.RoleCluster, data, nil},
		"not JSON":                     {contract.RoleMachine, []byte(`{`), nil},
		"not an object":                {contract.RoleMachine, []byte(`[]`), nil},
		"trailing data":                {contract.RoleMachine, append(append([]byte{}, data...), '1'), nil},
		"unknown role":                 {"bastion", data, nil},
		"variable not JSON":            {contract.RoleMachine, data, map[string]json.RawMessage{"x": json.RawMessage(`nope`)}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if _, err := inputs.Hash(testKey, tc.role, image, tc.tfvars, tc.vars, nil); err == nil {
				t.Error("hashed")
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	testCases := map[string]string{
		` { "b" : 1 , "a" : [ true , false , null ] } `:     `{"a":[true,false,null],"b":1}`,
		`"\u003c\u0026\u003e \/ \u00e9 é \t \u001f \u2028"`: "\"<&> / é é \\u0009 \\u001f \u2028\"",
		`{"a":1,"a":2}`:            `{"a":2}`,
		`-0`:                       `0`,
		`{"é":1,"z":2,"A":3,"":4}`: `{"":4,"A":3,"z":2,"é":1}`,
		`"\ud800"`:                 "\"\ufffd\"",
	}
	for in, want := range testCases {
		got, err := inputs.Canonical([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if string(got) != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

// FuzzCanonical: canonicalisation never panics, is idempotent, and a
// document re-encoded with its object keys in another order canonicalises
// (and hashes) the same.
func FuzzCanonical(f *testing.F) {
	for _, seed := range []string{`{}`, `{"b":{"d":1,"c":[2,{"y":null,"x":"<"}]},"a":true}`, `[1.5]`, `"\u00e9"`, `{"a":1,"a":2}`, `-0`, `1e3`, `{"\u0000":"\ud800"}`, `nul`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = inputs.Hash(testKey, contract.RoleMachine, "img", data, map[string]json.RawMessage{"v": data}, nil)
		canon, err := inputs.Canonical(data)
		if err != nil {
			return
		}
		again, err := inputs.Canonical(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", data, canon, again, err)
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("canonicalised invalid JSON %q", data)
		}
		var reversed bytes.Buffer
		writeReversed(&reversed, v)
		other, err := inputs.Canonical(reversed.Bytes())
		if err != nil || !bytes.Equal(other, canon) {
			t.Fatalf("key order changed the canonical form: %q vs %q (%v)", reversed.Bytes(), canon, err)
		}
		wrap := func(doc []byte) []byte { return []byte(`{"captf_cluster_outputs":` + string(doc) + `}`) }
		h1, err1 := inputs.Hash(testKey, contract.RoleMachine, "img", wrap(data), nil, nil)
		h2, err2 := inputs.Hash(testKey, contract.RoleMachine, "img", wrap(reversed.Bytes()), nil, nil)
		if err1 != nil || err2 != nil || h1 != h2 {
			t.Fatalf("equal documents hash differently: %s %s (%v, %v)", h1, h2, err1, err2)
		}
	})
}

// writeReversed encodes a decoded value with object keys in reverse order
// and some whitespace.
func writeReversed(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		buf.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(" , ")
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteString(" : ")
			writeReversed(buf, v[k])
		}
		buf.WriteString(" }")
	case []any:
		buf.WriteString("[ ")
		for i, e := range v {
			if i > 0 {
				buf.WriteString(" , ")
			}
			writeReversed(buf, e)
		}
		buf.WriteString(" ]")
	default:
		b, _ := json.Marshal(v)
		buf.Write(b)
	}
}
