package contract

import (
	"encoding/json"
	"os"
	"testing"
)

// jsonKind is the JSON kind of a value: object, array, string, number, bool
// or null.
func jsonKind(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "invalid"
	}
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

// Every constrained input has an example of the kind a real rendered
// document (testdata) holds.
func TestInputExamples(t *testing.T) {
	for _, role := range Roles {
		examples, err := InputExamples(role)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile("testdata/" + string(role) + "-inputs.json")
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		names, err := InputNames(role)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			got := examples[name]
			if name == "captf_cluster_outputs" {
				if len(got) != 0 {
					t.Errorf("%s %s: examples %s, want none (any value)", role, name, got)
				}
				continue
			}
			if len(got) == 0 {
				t.Errorf("%s %s: no example", role, name)
				continue
			}
			want := jsonKind(doc[name])
			if want == "null" {
				continue
			}
			if k := jsonKind(got[0]); k != want {
				t.Errorf("%s %s: example %s is a %s, the rendered document holds a %s", role, name, got[0], k, want)
			}
		}
	}
}
