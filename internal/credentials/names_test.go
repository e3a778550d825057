package credentials

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func TestMirrorName(t *testing.T) {
	long := strings.Repeat("a", 242) // captf-creds- (12) + 242 = 254
	fits := strings.Repeat("b", 241) // exactly 253
	testCases := []struct {
		name     string
		identity string
		want     string
	}{
		{"short", "aws-prod", "captf-creds-aws-prod"},
		{"exactly 253", fits, "captf-creds-" + fits},
		{"over 253 is hashed", long, "captf-creds-" + hashPrefix(long)},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := MirrorName(tc.identity)
			if got != tc.want {
				t.Fatalf("MirrorName(%q) = %q, want %q", tc.identity, got, tc.want)
			}
		})
	}
}

func hashPrefix(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

func TestSourceHash(t *testing.T) {
	base := map[string][]byte{"AWS_ACCESS_KEY_ID": []byte("id"), "AWS_SECRET_ACCESS_KEY": []byte("secret")}
	same := map[string][]byte{"AWS_SECRET_ACCESS_KEY": []byte("secret"), "AWS_ACCESS_KEY_ID": []byte("id")}
	if SourceHash(base) != SourceHash(same) {
		t.Fatal("the hash depends on map order")
	}
	if len(SourceHash(base)) != 64 {
		t.Fatalf("hash %q is not 64 hex characters", SourceHash(base))
	}
	testCases := []struct {
		name string
		a, b map[string][]byte
	}{
		{"value changed", map[string][]byte{"k": []byte("v1")}, map[string][]byte{"k": []byte("v2")}},
		{"boundary moved between key and value", map[string][]byte{"ab": []byte("c")}, map[string][]byte{"a": []byte("bc")}},
		{"boundary moved between entries", map[string][]byte{"a": []byte("b"), "c": nil}, map[string][]byte{"a": []byte("bc")}},
		{"empty value vs missing key", map[string][]byte{"k": {}}, map[string][]byte{}},
		{"key renamed", map[string][]byte{"k1": []byte("v")}, map[string][]byte{"k2": []byte("v")}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if SourceHash(tc.a) == SourceHash(tc.b) {
				t.Fatalf("SourceHash(%v) == SourceHash(%v)", tc.a, tc.b)
			}
		})
	}
}

func TestMissingKeys(t *testing.T) {
	data := map[string][]byte{"present": []byte("x"), "empty": {}}
	got := MissingKeys([]string{"zeta", "present", "empty", "alpha"}, data)
	if strings.Join(got, ",") != "alpha,zeta" {
		t.Fatalf("MissingKeys = %v, want [alpha zeta] (an empty value counts as present)", got)
	}
	if MissingKeys(nil, data) != nil {
		t.Fatal("no required keys must report nothing missing")
	}
}
