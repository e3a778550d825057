package inputs_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
)

// TestHashIsKeyed: the inputs hash is the documented HMAC of the h2
// digest under the object's key, so that a reader of a Job or a plan
// who knows every input but a secret one cannot confirm a guess of it
// without the key, and a stored h2 digest rekeys to the hash of the same
// inputs.
func TestHashIsKeyed(t *testing.T) {
	tfvars := []byte(`{"captf_contract":"v1alpha1","machine_name":"m","control_plane":false}`)
	secret := map[string]json.RawMessage{"password": json.RawMessage(`"hunter2"`)}
	sensitive := map[string]bool{"password": true}
	digest, err := inputs.Digest(contract.RoleMachine, "img", tfvars, secret, sensitive, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := inputs.Hash(testKey, contract.RoleMachine, "img", tfvars, secret, sensitive)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, testKey)
	mac.Write([]byte(digest))
	if want := "h3:" + hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Errorf("hash %s, want %s (HMAC-SHA256 of the h2 digest under the key)", got, want)
	}
	if strings.Contains(got, strings.TrimPrefix(digest, "h2:")) {
		t.Errorf("hash %s shows the unkeyed digest %s", got, digest)
	}
	if again := inputs.Rekey(testKey, digest); again != got {
		t.Errorf("rekeyed h2 digest %s, want the hash of the same inputs %s", again, got)
	}
	other := bytes.Repeat([]byte{1}, inputs.MinKeyBytes)
	if h, _ := inputs.Hash(other, contract.RoleMachine, "img", tfvars, secret, sensitive); h == got {
		t.Error("two keys give the same hash: the key does not key it")
	}
	if _, err := inputs.Hash(testKey[:inputs.MinKeyBytes-1], contract.RoleMachine, "img", tfvars, nil, nil); err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("a short key hashed (error %v)", err)
	}
	for _, stored := range []string{"", got, "p2:abc", "x"} {
		if r := inputs.Rekey(testKey, stored); r != stored {
			t.Errorf("Rekey(%q) = %q, want it unchanged", stored, r)
		}
	}
	if r := inputs.Rekey(nil, digest); r != digest {
		t.Errorf("Rekey without a key = %q, want the stored value", r)
	}
}
