package plan

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"
)

// canonical writes v as canonical JSON: object keys sorted by byte order, no
// insignificant white space, numbers exactly as the runtime wrote them,
// strings escaped minimally (only '"', '\\' and control characters), so
// that equal values always give equal bytes.
//
// v is a decoded plan value (map[string]any, []any, string, json.Number,
// bool, nil) or a value this package built from them (int path steps,
// []string).
func canonical(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case json.Number:
		// The decoder checked the literal; keep it byte for byte.
		buf.WriteString(string(v))
	case int:
		buf.WriteString(strconv.Itoa(v))
	case string:
		canonicalString(buf, v)
	case []string:
		buf.WriteByte('[')
		for i, s := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			canonicalString(buf, s)
		}
		buf.WriteByte(']')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			canonical(buf, e)
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			canonicalString(buf, k)
			buf.WriteByte(':')
			canonical(buf, v[k])
		}
		buf.WriteByte('}')
	default:
		// Unreachable for decoded JSON; a distinct token keeps the output
		// deterministic instead of panicking.
		buf.WriteString(`"\u0000unsupported"`)
	}
}

func canonicalString(buf *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			buf.WriteByte('\\')
			buf.WriteByte(byte(r))
		case r < 0x20:
			buf.WriteString(`\u00`)
			buf.WriteByte(hexDigits[r>>4])
			buf.WriteByte(hexDigits[r&0xf])
		case r == utf8.RuneError && size == 1:
			// The decoder already replaced invalid UTF-8; be explicit anyway.
			buf.WriteString(`\ufffd`)
		default:
			buf.WriteString(s[i : i+size])
		}
		i += size
	}
	buf.WriteByte('"')
}
