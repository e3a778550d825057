package inputs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The canonical JSON the inputs hash is computed over (see Hash):
//
//   - objects: "{", members sorted by key in byte order of the keys' UTF-8,
//     "key":value separated by ",", "}"; no whitespace anywhere. A key that
//     appears twice keeps its last value, as encoding/json does.
//   - arrays: "[", values in order separated by ",", "]".
//   - strings: '"', the decoded text with '"' written as \" and '\' as \\,
//     U+0000 to U+001F as \u00xx (lowercase hex) and every other character
//     as its literal UTF-8 bytes; '"'. Escapes in the input are decoded
//     first and invalid UTF-8 becomes U+FFFD, so equal texts encode equally.
//   - numbers: integers only, written as their decimal digits with an
//     optional leading "-" ("-0" is written "0"), of any magnitude; a number
//     with a fraction or an exponent has no canonical form (NumberError).
//   - true, false, null as such.

// ErrNonInteger is wrapped by every NumberError.
var ErrNonInteger = errors.New("fractional or exponent number")

// NumberError reports inputs that cannot be hashed because they hold a
// number with a fraction or an exponent. It never carries the value.
type NumberError struct {
	// Input is the top-level tfvars key holding the number, "" when it is
	// in a user variable.
	Input string
	// Variable is the user variable holding the number, if any.
	Variable string
	// Pointer locates the number within the input or variable (a JSON
	// pointer; "" is the value itself).
	Pointer string
}

// FromExports tells whether the number came from the cluster's exports
// (captf_cluster_outputs): the cluster reports it as OutputsInvalid and its
// machines and pools wait for fixed exports.
func (e *NumberError) FromExports() bool { return e.Input == "captf_cluster_outputs" }

func (e *NumberError) Error() string {
	switch {
	case e.FromExports():
		return "exports contains a fractional or exponent number; export numbers as integers or strings"
	case e.Variable != "":
		return "variable " + strconv.Quote(e.Variable) + " contains a fractional or exponent number; pass numbers as integers or strings"
	case e.Input == "":
		return "the document contains a fractional or exponent number; use integers or strings"
	}
	return "input " + e.Input + " contains a fractional or exponent number; pass numbers as integers or strings"
}

// Unwrap makes errors.Is(err, ErrNonInteger) hold.
func (e *NumberError) Unwrap() error { return ErrNonInteger }

// numberAt is the error canonical returns while unwinding: the path from
// the number up, reversed.
type numberAt struct{ reversed []string }

func (*numberAt) Error() string { return ErrNonInteger.Error() }

// path is the number's location from the document root.
func (n *numberAt) path() []string {
	p := slices.Clone(n.reversed)
	slices.Reverse(p)
	return p
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointerOf writes a JSON pointer.
func pointerOf(path []string) string {
	var b strings.Builder
	for _, seg := range path {
		b.WriteString("/")
		b.WriteString(pointerEscaper.Replace(seg))
	}
	return b.String()
}

// errNotJSON is what decodeJSON reports: the decoder's own messages may
// quote a character of the (possibly secret) document.
var errNotJSON = errors.New("not one valid JSON document")

// decodeJSON decodes exactly one JSON document, numbers kept as text.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errNotJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotJSON
	}
	return v, nil
}

// Canonical returns the canonical encoding of one JSON document. A
// fractional or exponent number anywhere is a *NumberError whose Pointer
// locates it.
func Canonical(data []byte) ([]byte, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeCanonical(&buf, v); err != nil {
		var n *numberAt
		if errors.As(err, &n) {
			return nil, &NumberError{Pointer: pointerOf(n.path())}
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeCanonical writes a value decoded by decodeJSON.
func writeCanonical(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if v {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case string:
		writeString(buf, v)
	case json.Number:
		s := string(v)
		if strings.ContainsAny(s, ".eE") {
			return &numberAt{}
		}
		if s == "-0" {
			s = "0"
		}
		buf.WriteString(s)
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return at(err, itoa(i))
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
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeCanonical(buf, v[k]); err != nil {
				return at(err, k)
			}
		}
		buf.WriteByte('}')
	default:
		return errors.New("not a decoded JSON value")
	}
	return nil
}

func at(err error, segment string) error {
	var n *numberAt
	if errors.As(err, &n) {
		n.reversed = append(n.reversed, segment)
	}
	return err
}

func itoa(i int) string { return strconv.Itoa(i) }

const hexDigits = "0123456789abcdef"

func writeString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf.WriteByte('\\')
			buf.WriteByte(c)
		case c < 0x20:
			buf.WriteString(`\u00`)
			buf.WriteByte(hexDigits[c>>4])
			buf.WriteByte(hexDigits[c&0xf])
		default:
			buf.WriteByte(c)
		}
	}
	buf.WriteByte('"')
}
