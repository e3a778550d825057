package contract

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// InputExamples returns, for each contract input of the role, example
// values of every non-null shape its schema allows (one per alternative
// of an anyOf or a type list), as JSON. Lists hold one item and maps one
// entry, so an example shows the element types too. An input whose schema
// constrains nothing (captf_cluster_outputs: any value) has no example.
// A linter converts the examples to a module's declared types to tell
// whether the module accepts what the generated root passes.
func InputExamples(role Role) (map[string][]json.RawMessage, error) {
	docs, err := schemaDocs()
	if err != nil {
		return nil, err
	}
	file := string(role) + "-inputs.json"
	top, ok := docs[file]
	if !ok {
		return nil, fmt.Errorf("no contract schema %s", file)
	}
	props, _ := top["properties"].(map[string]any)
	out := map[string][]json.RawMessage{}
	for name, p := range props {
		s, _ := p.(map[string]any)
		values, err := examples(docs, file, s, 0)
		if err != nil {
			return nil, fmt.Errorf("schema %s: property %s: %w", file, name, err)
		}
		for _, v := range values {
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			out[name] = append(out[name], raw)
		}
	}
	return out, nil
}

func schemaDocs() (map[string]map[string]any, error) {
	entries, err := schemaFS.ReadDir("schemas")
	if err != nil {
		return nil, err
	}
	docs := map[string]map[string]any{}
	for _, e := range entries {
		data, err := schemaFS.ReadFile("schemas/" + e.Name())
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", e.Name(), err)
		}
		docs[e.Name()] = doc
	}
	return docs, nil
}

// examples returns one value per non-null shape s allows; nil when s
// constrains nothing.
func examples(docs map[string]map[string]any, file string, s map[string]any, depth int) ([]any, error) {
	if depth > 32 {
		return nil, fmt.Errorf("schema nests too deep")
	}
	if ref, ok := s["$ref"].(string); ok {
		target, tfile, err := resolve(docs, file, ref)
		if err != nil {
			return nil, err
		}
		return examples(docs, tfile, target, depth+1)
	}
	if c, ok := s["const"]; ok {
		return []any{c}, nil
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return []any{enum[0]}, nil
	}
	for _, key := range []string{"anyOf", "allOf"} {
		if alts, ok := s[key].([]any); ok {
			var all []any
			for _, a := range alts {
				m, _ := a.(map[string]any)
				vs, err := examples(docs, file, m, depth+1)
				if err != nil {
					return nil, err
				}
				all = append(all, vs...)
			}
			return all, nil
		}
	}
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				types = append(types, str)
			}
		}
	}
	var out []any
	for _, t := range types {
		v, err := example(docs, file, s, t, depth)
		if err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// example returns a value of one JSON type of s; nil for null.
func example(docs map[string]map[string]any, file string, s map[string]any, t string, depth int) (any, error) {
	first := func(sub any) (any, error) {
		m, _ := sub.(map[string]any)
		vs, err := examples(docs, file, m, depth+1)
		if err != nil || len(vs) == 0 {
			return "x", err
		}
		return vs[0], nil
	}
	switch t {
	case "string":
		return "x", nil
	case "integer", "number":
		return 1, nil
	case "boolean":
		return true, nil
	case "array":
		item, err := first(s["items"])
		return []any{item}, err
	case "object":
		obj := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v, err := first(props[n])
			if err != nil {
				return nil, err
			}
			obj[n] = v
		}
		if extra, ok := s["additionalProperties"].(map[string]any); ok && len(props) == 0 {
			v, err := first(extra)
			if err != nil {
				return nil, err
			}
			obj["key"] = v
		}
		return obj, nil
	}
	return nil, nil
}

// resolve finds the schema a $ref of file points at: "#/$defs/x" in the
// same file or "other.json#/$defs/x".
func resolve(docs map[string]map[string]any, file, ref string) (map[string]any, string, error) {
	target, pointer, _ := strings.Cut(ref, "#")
	if target == "" {
		target = file
	}
	doc, ok := docs[target]
	if !ok {
		return nil, "", fmt.Errorf("$ref %q: no schema %s", ref, target)
	}
	var node any = doc
	for _, part := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if part == "" {
			continue
		}
		m, _ := node.(map[string]any)
		node = m[part]
	}
	m, ok := node.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("$ref %q points at nothing", ref)
	}
	return m, target, nil
}
