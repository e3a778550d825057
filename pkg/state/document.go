package state

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// document is what the scan keeps of a state: the few scalars CAPTF reads
// as raw JSON (decoded once the scan has finished), outputs, and the
// managed resource count. Keys match exactly as the runtimes write them.
// When a key repeats, its last value is used, as with encoding/json; a
// wrongly typed earlier one still makes the state corrupt.
type document struct {
	version, serial, lineage, runtime json.RawMessage // nil when absent
	encrypted                         bool
	outputs                           map[string]Output
	managed                           int
	// wrongType names the first member whose JSON type CAPTF cannot use.
	// It is reported only after encryption and version, which explain a
	// strange shape better.
	wrongType string
}

func (d *document) mistyped(member string) {
	if d.wrongType == "" {
		d.wrongType = member
	}
}

// document scans the whole input: one object, then only whitespace.
func (s *scanner) document(d *document) bool {
	c, ok := s.next()
	if !ok {
		return false
	}
	if c != '{' {
		// Say "not JSON" rather than "not an object" when that is the case.
		if !s.skipValue(0) {
			return false
		}
		s.skipSpace()
		if !s.atEnd() {
			return s.syntaxError("data after the value")
		}
		s.err = corrupt("state is not a JSON object")
		return false
	}
	ok = s.members(func(key []byte) bool {
		switch string(key) {
		case "version":
			d.version, ok = s.captured(1)
			return ok
		case "serial":
			d.serial, ok = s.captured(1)
			return ok
		case "lineage":
			d.lineage, ok = s.captured(1)
			return ok
		case "terraform_version":
			d.runtime, ok = s.captured(1)
			return ok
		case "encryption_version":
			d.encrypted = true
		case "outputs":
			return s.outputs(d)
		case "resources":
			return s.resources(d)
		}
		return s.skipValue(1)
	})
	s.skipSpace()
	if ok && !s.atEnd() {
		return s.syntaxError("data after the state object")
	}
	return ok && s.err == nil
}

// capture skips a value and calls use with its JSON, which is valid only
// during the call.
func (s *scanner) capture(depth int, use func(value []byte)) bool {
	if _, ok := s.next(); !ok {
		return false
	}
	at, prev := s.holdFrom()
	defer s.release(prev)
	if !s.skipValue(depth) {
		return false
	}
	use(s.held(at))
	return true
}

// captured copies a value out of the window.
func (s *scanner) captured(depth int) (value json.RawMessage, ok bool) {
	ok = s.capture(depth, func(v []byte) { value = slices.Clone(v) })
	return value, ok
}

func (s *scanner) outputs(d *document) bool {
	c, ok := s.next()
	switch {
	case !ok:
		return false
	case c == 'n':
		d.outputs = nil
		return s.skipLiteral("null")
	case c != '{':
		d.mistyped("outputs")
		return s.skipValue(1)
	}
	d.outputs = map[string]Output{}
	return s.members(func(key []byte) bool {
		name := string(key) // before the window moves on
		o, ok := s.output(d)
		d.outputs[name] = o
		return ok
	})
}

// output scans one output: {"value": ..., "type": ..., "sensitive": bool}.
func (s *scanner) output(d *document) (Output, bool) {
	var o Output
	c, ok := s.next()
	switch {
	case !ok:
		return o, false
	case c == 'n':
		return o, s.skipLiteral("null")
	case c != '{':
		d.mistyped("outputs")
		return o, s.skipValue(2)
	}
	ok = s.members(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "value":
			o.Value, ok = s.captured(3)
		case "type":
			o.Type, ok = s.captured(3)
		case "sensitive":
			var c byte
			if c, ok = s.next(); !ok {
				return false
			}
			switch c {
			case 't':
				o.Sensitive, ok = true, s.skipLiteral("true")
			case 'f':
				o.Sensitive, ok = false, s.skipLiteral("false")
			case 'n': // null leaves a bool as it was, as in encoding/json
				ok = s.skipLiteral("null")
			default:
				d.mistyped("outputs")
				ok = s.skipValue(3)
			}
		default:
			ok = s.skipValue(3)
		}
		return ok
	})
	return o, ok
}

// resources counts the resource blocks of mode "managed". Everything else
// in a resource, its instances and their attributes, is only validated.
func (s *scanner) resources(d *document) bool {
	d.managed = 0
	c, ok := s.next()
	switch {
	case !ok:
		return false
	case c == 'n':
		return s.skipLiteral("null")
	case c != '[':
		d.mistyped("resources")
		return s.skipValue(1)
	}
	return s.elements(func() bool {
		c, ok := s.next()
		switch {
		case !ok:
			return false
		case c == 'n':
			return s.skipLiteral("null")
		case c != '{':
			d.mistyped("resources")
			return s.skipValue(2)
		}
		return s.members(func(key []byte) bool {
			if string(key) != "mode" {
				return s.skipValue(3)
			}
			return s.capture(3, func(mode []byte) {
				managed, typed := isManaged(mode)
				if managed {
					d.managed++
				}
				if !typed {
					d.mistyped("resources")
				}
			})
		})
	})
}

func isManaged(raw []byte) (managed, typed bool) {
	switch {
	case string(raw) == `"managed"`:
		return true, true
	case string(raw) == "null":
		return false, true
	case raw[0] != '"':
		return false, false
	}
	var mode string
	err := json.Unmarshal(raw, &mode)
	return err == nil && mode == "managed", err == nil
}

// members walks an object whose '{' is at pos, calling member with each
// unescaped key; member consumes the value. The key is valid until member
// reads on.
func (s *scanner) members(member func(key []byte) bool) bool {
	s.pos++
	c, ok := s.next()
	if !ok {
		return false
	}
	if c == '}' {
		s.pos++
		return true
	}
	for {
		if c, ok = s.next(); !ok {
			return false
		}
		if c != '"' {
			return s.syntaxError("want object key")
		}
		at, prev := s.holdFrom()
		ok = s.skipString()
		end := s.base + s.pos
		ok = ok && s.expect(':', "':'")
		var key []byte
		if ok {
			key = unquote(s.b[at-s.base : end-s.base])
		}
		s.release(prev)
		if !ok || !member(key) {
			return false
		}
		if c, ok = s.next(); !ok {
			return false
		}
		if c == '}' {
			s.pos++
			return true
		}
		if c != ',' {
			return s.syntaxError("want ',' or '}'")
		}
		s.pos++
	}
}

// elements walks an array whose '[' is at pos; element consumes a value.
func (s *scanner) elements(element func() bool) bool {
	s.pos++
	c, ok := s.next()
	if !ok {
		return false
	}
	if c == ']' {
		s.pos++
		return true
	}
	for {
		if !element() {
			return false
		}
		if c, ok = s.next(); !ok {
			return false
		}
		if c == ']' {
			s.pos++
			return true
		}
		if c != ',' {
			return s.syntaxError("want ',' or ']'")
		}
		s.pos++
	}
}

// unquote returns the content of a validated JSON string as encoding/json
// would. Escapes and invalid UTF-8 are rare in keys, so the common case is a
// subslice with no allocation.
func unquote(quoted []byte) []byte {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	var str string
	if err := json.Unmarshal(quoted, &str); err != nil {
		return inner // unreachable: the scanner validated the string
	}
	return []byte(str)
}
