package inputs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"captf.io/captf/internal/canonjson"
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
var ErrNonInteger = canonjson.ErrNonInteger

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
	if err := canonjson.Write(&buf, v, canonjson.IntegersOnly); err != nil {
		var n *canonjson.PathError
		if errors.As(err, &n) && errors.Is(err, ErrNonInteger) {
			return nil, &NumberError{Pointer: pointerOf(n.Path)}
		}
		return nil, err
	}
	return buf.Bytes(), nil
}
