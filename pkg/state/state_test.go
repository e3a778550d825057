package state

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestOutputValuesNeverPrinted(t *testing.T) {
	st, err := Decode(testSuffix, secretsFor(gz(t, smallState)))
	if err != nil {
		t.Fatal(err)
	}
	secret := st.Outputs["kubeconfig"]
	leaks := func(s string) bool {
		return strings.Contains(s, marker) || strings.Contains(s, hex.EncodeToString([]byte(marker))) ||
			strings.Contains(s, "10.0.0.1")
	}
	values := map[string]any{
		"*State": st, "State": *st, "outputs": st.Outputs, "output": secret,
		"outputs slice": []Output{secret}, "pointer to output": &secret,
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			t.Run(name+" "+verb, func(t *testing.T) {
				if got := fmt.Sprintf(verb, v); leaks(got) {
					t.Errorf("fmt %s prints an output value: %s", verb, got)
				}
			})
		}
	}
	t.Run("slog", func(t *testing.T) {
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("read", "state", st, "output", secret, "outputs", st.Outputs)
		if leaks(buf.String()) {
			t.Errorf("slog prints an output value: %s", buf.String())
		}
	})
	t.Run("json", func(t *testing.T) {
		b, err := json.Marshal(st)
		if err != nil || leaks(string(b)) {
			t.Errorf("json.Marshal() = %s, %v; want no output value", b, err)
		}
	})
	t.Run("logr", func(t *testing.T) {
		// logr sinks (zapr, funcr) print what logr.Marshaler returns.
		for _, v := range []interface{ MarshalLog() any }{st, *st, secret} {
			if got := fmt.Sprint(v.MarshalLog()); leaks(got) {
				t.Errorf("MarshalLog() gives an output value: %s", got)
			}
		}
	})
}

func TestOutputString(t *testing.T) {
	testCases := []struct {
		name string
		out  Output
		want string
	}{
		{name: "sensitive", out: Output{Value: []byte(`"x"`), Type: []byte(`"string"`), Sensitive: true}, want: `"string" (sensitive)`},
		{name: "not sensitive", out: Output{Value: []byte(`1`), Type: []byte(`"number"`)}, want: `"number" (value hidden)`},
		{name: "object type compacted", out: Output{Type: []byte("[\"object\", {\n  \"a\": \"string\"\n}]")}, want: `["object",{"a":"string"}] (value hidden)`},
		{name: "no type", out: Output{Value: []byte(`1`)}, want: `untyped (value hidden)`},
		{name: "long type cut", out: Output{Type: []byte(`"` + strings.Repeat("t", 200) + `"`)}, want: `"` + strings.Repeat("t", 79) + `... (value hidden)`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.out.String(); got != tc.want {
				t.Errorf("String() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	a, b := stateSecret(ChunkName(testSuffix, 0), []byte("a")), stateSecret(ChunkName(testSuffix, 1), []byte("b"))
	changed := b
	changed.ResourceVersion = "999"
	meta := func(s ...corev1.Secret) []metav1.PartialObjectMetadata {
		var out []metav1.PartialObjectMetadata
		for _, x := range s {
			out = append(out, metav1.PartialObjectMetadata{ObjectMeta: x.ObjectMeta})
		}
		return out
	}
	split := func(name, rv string) corev1.Secret {
		return corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}}
	}
	ab := Fingerprint([]corev1.Secret{a, b})
	testCases := []struct {
		name       string
		got, other string
		same       bool
	}{
		{name: "listed in another order", got: Fingerprint([]corev1.Secret{b, a}), other: ab, same: true},
		{name: "from the metadata cache", got: Fingerprint(meta(a, b)), other: ab, same: true},
		{name: "a resourceVersion changed", got: Fingerprint([]corev1.Secret{a, changed}), other: ab},
		{name: "a Secret deleted", got: Fingerprint([]corev1.Secret{a}), other: ab},
		{name: "a Secret added", got: Fingerprint([]corev1.Secret{a, b, stateSecret(ChunkName(testSuffix, 2), nil)}), other: ab},
		{name: "no Secret", got: Fingerprint([]corev1.Secret{}), other: ab},
		{
			name:  "name and version split differently",
			got:   Fingerprint([]corev1.Secret{split("ab", "c")}),
			other: Fingerprint([]corev1.Secret{split("a", "bc")}),
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.got == tc.other) != tc.same {
				t.Errorf("fingerprints %s and %s: equal = %v, want %v", tc.got, tc.other, tc.got == tc.other, tc.same)
			}
		})
	}
}

// The reasons must be the StateReadable reasons CAPTF's API declares, so
// that a caller can copy them into the condition.
func TestReasonsAreConditionReasons(t *testing.T) {
	testCases := []struct {
		reason Reason
		want   string
	}{
		{ReasonInconsistent, infrav1.StateInconsistentReason},
		{ReasonCorrupt, infrav1.StateCorruptReason},
		{ReasonEncrypted, infrav1.StateEncryptedReason},
		{ReasonNotFound, infrav1.StateNotFoundReason},
	}
	for _, tc := range testCases {
		t.Run(tc.want, func(t *testing.T) {
			if string(tc.reason) != tc.want {
				t.Errorf("reason %q, API declares %q", tc.reason, tc.want)
			}
		})
	}
}
