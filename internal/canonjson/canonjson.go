// Package canonjson owns the canonical JSON that CAPTF hashes: the inputs
// hash (internal/inputs) and the plan fingerprint (internal/plan). The
// bytes are a contract: a hash computed before an upgrade must equal the
// one computed after it, so the golden tests here pin them.
//
// The form:
//
//   - objects: "{", members sorted by key in byte order of the keys' UTF-8,
//     "key":value separated by ",", "}"; no whitespace anywhere;
//   - arrays: "[", values in order separated by ",", "]";
//   - strings: '"', the text with '"' written as \" and '\' as \\, U+0000
//     to U+001F as \u00xx (lowercase hex), invalid UTF-8 as \ufffd, and
//     every other character as its literal UTF-8 bytes; '"';
//   - numbers: as the caller's Numbers says (Verbatim, or IntegersOnly);
//   - true, false, null as such.
package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Numbers writes a number literal: the bytes to write, or an error, which
// Write returns inside a *PathError locating the number.
type Numbers func(literal string) (string, error)

// Verbatim keeps every number literal byte for byte, as the runtime wrote
// it (plan fingerprints).
func Verbatim(literal string) (string, error) { return literal, nil }

// ErrNonInteger is IntegersOnly's refusal.
var ErrNonInteger = errors.New("fractional or exponent number")

// IntegersOnly writes integers as their digits ("-0" as "0") and refuses a
// number with a fraction or an exponent (inputs hash).
func IntegersOnly(literal string) (string, error) {
	if strings.ContainsAny(literal, ".eE") {
		return "", ErrNonInteger
	}
	if literal == "-0" {
		return "0", nil
	}
	return literal, nil
}

// ErrUnsupported is Write's error for a value that is not a decoded JSON
// value (nor an int or []string).
var ErrUnsupported = errors.New("not a decoded JSON value")

// PathError is a number Numbers refused, or an unsupported value, and
// where it is: object keys and array indexes from the root.
type PathError struct {
	Path []string
	Err  error
}

func (e *PathError) Error() string { return e.Err.Error() }

func (e *PathError) Unwrap() error { return e.Err }

// Write writes v canonically. v is a value decoded with UseNumber
// (map[string]any, []any, string, json.Number, bool, nil), or an int or a
// []string. An unsupported value writes the string "\u0000unsupported" and
// is an error, so the output stays deterministic for callers that ignore
// it.
func Write(buf *bytes.Buffer, v any, numbers Numbers) error {
	var path []string
	return write(buf, v, numbers, &path)
}

// write keeps path, the location of v, for errors.
func write(buf *bytes.Buffer, v any, numbers Numbers, path *[]string) error {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case string:
		WriteString(buf, v)
	case json.Number:
		s, err := numbers(string(v))
		if err != nil {
			return &PathError{Path: append([]string(nil), *path...), Err: err}
		}
		buf.WriteString(s)
	case int:
		buf.WriteString(strconv.Itoa(v))
	case []string:
		buf.WriteByte('[')
		for i, s := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			WriteString(buf, s)
		}
		buf.WriteByte(']')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			*path = append(*path, strconv.Itoa(i))
			err := write(buf, e, numbers, path)
			*path = (*path)[:len(*path)-1]
			if err != nil {
				return err
			}
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
			WriteString(buf, k)
			buf.WriteByte(':')
			*path = append(*path, k)
			err := write(buf, v[k], numbers, path)
			*path = (*path)[:len(*path)-1]
			if err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		buf.WriteString(`"\u0000unsupported"`)
		return &PathError{Path: append([]string(nil), *path...), Err: ErrUnsupported}
	}
	return nil
}

// WriteString writes s as a canonical JSON string.
func WriteString(buf *bytes.Buffer, s string) {
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
			buf.WriteString(`\ufffd`)
		default:
			buf.WriteString(s[i : i+size])
		}
		i += size
	}
	buf.WriteByte('"')
}
