package outputs

import (
	"bytes"
	"encoding/json"
)

// optional lists the optional attributes of an output's objects: of the
// output itself, or of each of its elements when it is a list.
type optional struct {
	list  bool
	attrs []string
}

// optionals are the contract's optional(type, default) attributes. The
// contract writes them in Terraform's notation, where a null attribute is
// an unset one; a module building an object with `x = null` (typically
// through try(..., null)) means "use the default", so a null one is dropped
// before validation and takes its default like an absent one.
var optionals = map[string]optional{
	"failure_domains": {list: true, attrs: []string{"control_plane", "attributes"}},
	"health":          {attrs: []string{"message", "reasons"}},
	"instances":       {list: true, attrs: []string{"instance_id", "addresses", "failure_domain", "state"}},
}

// defaultOptionals drops the null optional attributes of an output. A value
// of another shape is left for the schema to judge.
func defaultOptionals(name string, v json.RawMessage) json.RawMessage {
	opt, ok := optionals[name]
	if !ok || !bytes.Contains(v, []byte("null")) {
		return v
	}
	if !opt.list {
		return dropNulls(v, opt.attrs)
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil || items == nil {
		return v
	}
	for i := range items {
		items[i] = dropNulls(items[i], opt.attrs)
	}
	out, err := json.Marshal(items)
	if err != nil {
		return v
	}
	return out
}

func dropNulls(v json.RawMessage, attrs []string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil || obj == nil {
		return v
	}
	changed := false
	for _, a := range attrs {
		if x, ok := obj[a]; ok && isNull(x) {
			delete(obj, a)
			changed = true
		}
	}
	if !changed {
		return v
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return v
	}
	return out
}
