package plan

import (
	"bytes"
	"encoding/json"
	"sort"
)

// The effect of a change is what the fingerprint binds beyond the change's
// name and actions. It is encoded as one canonical JSON object (see
// canonical) whose members are omitted when they have nothing to say:
//
//	"after"      create, read: the planned value as the runtime wrote it
//	             (null included).
//	"unknown"    create, read: the paths known only after apply (the
//	             `true` leaves of after_unknown).
//	"sensitive"  create, read: the paths marked sensitive (the `true`
//	             leaves of after_sensitive).
//	"changes"    update, replace: one entry per touched path, sorted by the
//	             path's canonical bytes:
//	               {"path": P, "old": v, "new": v,
//	                "unknown": true, "sensitivity": "added"|"removed"}
//	             "old" / "new" are present exactly when the path exists on
//	             that side, so an absent key and a key set to null differ;
//	             "unknown" marks a path of after_unknown; "sensitivity"
//	             marks a path whose sensitive marker (a `true` leaf of
//	             before_sensitive / after_sensitive) appears or disappears.
//	"import"     the change's importing object (id, identity, ...) verbatim.
//	"moved_from" the previous address of a moved resource.
//	"deposed"    the deposed-object key, for a change to a deposed object.
//	"output"     true for an output change, so that an output "a" and a
//	             resource at the (odd but legal) address "output.a" with the
//	             same change never share a line.
//
// Delete, forget and no-op carry no value members: the name and actions
// identify them, but their import, move and deposed members stay.
//
// A path P is a JSON array of steps: a number is a list (or tuple, or set)
// index, a string is a map key or object attribute, so ["tags","0"] and
// ["tags",0] differ.
//
// Touched paths come from walking before and after together: two objects
// (or maps) are compared key by key over the union of their keys, two lists
// index by index over the longer length; anywhere else (a scalar, null, a
// key present on one side only, or a container turning into something else)
// the path is touched when the two sides differ, and the entry carries both
// whole sides. Paths where both sides are equal, including attributes whose
// drift ignore_changes hides, never appear, so they do not move the hash.
func effect(c *change) map[string]any {
	e := map[string]any{}
	switch c.kind {
	case kindCreate, kindRead:
		e["after"] = c.after
		if paths := markerPaths(c.afterUnknown); len(paths) > 0 {
			e["unknown"] = paths
		}
		if paths := markerPaths(c.afterSensitive); len(paths) > 0 {
			e["sensitive"] = paths
		}
	case kindUpdate, kindReplace:
		if changes := touchedPaths(c); len(changes) > 0 {
			e["changes"] = changes
		}
	}
	return e
}

// outputEffect marks the change's effect as an output's.
func outputEffect(o *outputChange) map[string]any {
	e := effect(&o.change)
	e["output"] = true
	return e
}

// resourceEffect adds what only resources have to the change's effect.
func resourceEffect(r *resourceChange) map[string]any {
	e := effect(&r.change)
	if r.importing != nil {
		e["import"] = r.importing
	}
	if r.previousAddress != "" {
		e["moved_from"] = r.previousAddress
	}
	if r.deposed != "" {
		e["deposed"] = r.deposed
	}
	return e
}

// touched is one entry of "changes".
type touched struct {
	path           []any
	old, new       any
	hasOld, hasNew bool
	unknown        bool
	sensitivity    string
}

func (t *touched) encode() map[string]any {
	m := map[string]any{"path": t.path}
	if t.hasOld {
		m["old"] = t.old
	}
	if t.hasNew {
		m["new"] = t.new
	}
	if t.unknown {
		m["unknown"] = true
	}
	if t.sensitivity != "" {
		m["sensitivity"] = t.sensitivity
	}
	return m
}

// touchSet gathers entries by path.
type touchSet map[string]*touched

func (s touchSet) at(path []any) *touched {
	k := pathKey(path)
	t, ok := s[k]
	if !ok {
		t = &touched{path: path}
		s[k] = t
	}
	return t
}

func touchedPaths(c *change) []any {
	set := touchSet{}
	diff(set, []any{}, c.before, true, c.after, true)
	for _, p := range markerSet(c.afterUnknown) {
		set.at(p).unknown = true
	}
	before := markerSet(c.beforeSensitive)
	after := markerSet(c.afterSensitive)
	for k, p := range after {
		if _, ok := before[k]; !ok {
			set.at(p).sensitivity = "added"
		}
	}
	for k, p := range before {
		if _, ok := after[k]; !ok {
			set.at(p).sensitivity = "removed"
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, set[k].encode())
	}
	return out
}

// diff records every leaf path where a and b differ; aok / bok say
// whether the path exists on each side.
func diff(set touchSet, path []any, a any, aok bool, b any, bok bool) {
	if aok && bok {
		switch av := a.(type) {
		case map[string]any:
			if bv, ok := b.(map[string]any); ok {
				for _, k := range unionKeys(av, bv) {
					x, xok := av[k]
					y, yok := bv[k]
					diff(set, appendStep(path, k), x, xok, y, yok)
				}
				return
			}
		case []any:
			if bv, ok := b.([]any); ok {
				for i := 0; i < max(len(av), len(bv)); i++ {
					var x, y any
					if i < len(av) {
						x = av[i]
					}
					if i < len(bv) {
						y = bv[i]
					}
					diff(set, appendStep(path, i), x, i < len(av), y, i < len(bv))
				}
				return
			}
		default:
			if scalarEqual(a, b) {
				return
			}
		}
	}
	if !aok && !bok {
		return
	}
	t := set.at(path)
	t.old, t.hasOld = a, aok
	t.new, t.hasNew = b, bok
}

// scalarEqual compares two non-container values; a container is never
// equal to a scalar.
func scalarEqual(a, b any) bool {
	switch av := a.(type) {
	case nil:
		return b == nil
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case json.Number:
		// The literal, not the number: the runtime writes a value the same
		// way every time, and "1" vs "1.0" is then a real difference.
		bv, ok := b.(json.Number)
		return ok && av == bv
	}
	return false
}

func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// markerPaths lists, sorted, the paths whose marker is `true` in a marker
// tree (after_unknown, before_sensitive, after_sensitive mirror the value
// with `true` at marked leaves, or are `true` as a whole).
func markerPaths(markers any) []any {
	set := markerSet(markers)
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, set[k])
	}
	return out
}

// markerSet maps the canonical bytes of each marked path to the path.
func markerSet(markers any) map[string][]any {
	set := map[string][]any{}
	var walk func(path []any, m any)
	walk = func(path []any, m any) {
		switch mv := m.(type) {
		case bool:
			if mv {
				set[pathKey(path)] = path
			}
		case map[string]any:
			for k, v := range mv {
				walk(appendStep(path, k), v)
			}
		case []any:
			for i, v := range mv {
				walk(appendStep(path, i), v)
			}
		}
	}
	walk([]any{}, markers)
	return set
}

// appendStep returns a new path; it never shares the caller's array.
func appendStep(path []any, step any) []any {
	out := make([]any, len(path), len(path)+1)
	copy(out, path)
	return append(out, step)
}

func pathKey(path []any) string {
	var buf bytes.Buffer
	canonical(&buf, path)
	return buf.String()
}
