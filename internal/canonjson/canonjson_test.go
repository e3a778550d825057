package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// The bytes are a contract (every inputs hash and plan fingerprint ever
// stored depends on them): these are the outputs of the two encoders this
// package replaced (internal/inputs and internal/plan), captured before
// the merge. verbatim is the plan fingerprint's form; integers the inputs
// hash's, refused when nonInteger.
func TestGolden(t *testing.T) {
	testCases := []struct {
		doc, verbatim, integers string
		nonInteger              bool
	}{
		{"{}", "{}", "{}", false},
		{"[]", "[]", "[]", false},
		{"null", "null", "null", false},
		{"true", "true", "true", false},
		{"false", "false", "false", false},
		{"0", "0", "0", false},
		{"-0", "-0", "0", false},
		{"12345678901234567890123", "12345678901234567890123", "12345678901234567890123", false},
		{"-17", "-17", "-17", false},
		{"1.5", "1.5", "", true},
		{"1e3", "1e3", "", true},
		{"-0.0", "-0.0", "", true},
		{"\"\"", "\"\"", "\"\"", false},
		{"\"plain ascii\"", "\"plain ascii\"", "\"plain ascii\"", false},
		{"\"quote \\\" backslash \\\\ slash / tab \\t nl \\n cr \\r nul \\u0000 us \\u001f del \\u007f\"", "\"quote \\\" backslash \\\\ slash / tab \\u0009 nl \\u000a cr \\u000d nul \\u0000 us \\u001f del \x7f\"", "\"quote \\\" backslash \\\\ slash / tab \\u0009 nl \\u000a cr \\u000d nul \\u0000 us \\u001f del \x7f\"", false},
		{"\"unicode é ü 日本 🎉 \\u2028 \\u2029 \\ud83c\\udf89\"", "\"unicode é ü 日本 🎉 \u2028 \u2029 🎉\"", "\"unicode é ü 日本 🎉 \u2028 \u2029 🎉\"", false},
		{"\"<&> html \\u003c\\u0026\\u003e\"", "\"<&> html <&>\"", "\"<&> html <&>\"", false},
		{"\"lone surrogate \\ud800 x\"", "\"lone surrogate � x\"", "\"lone surrogate � x\"", false},
		{"{\"b\":1,\"a\":2,\"A\":3,\"é\":4,\"aa\":5,\"\":6}", "{\"\":6,\"A\":3,\"a\":2,\"aa\":5,\"b\":1,\"é\":4}", "{\"\":6,\"A\":3,\"a\":2,\"aa\":5,\"b\":1,\"é\":4}", false},
		{"{\"z\":{\"y\":[1,{\"x\":null,\"w\":[true,false]}],\"k\":\"v\"},\"a\":[[],{}]}", "{\"a\":[[],{}],\"z\":{\"k\":\"v\",\"y\":[1,{\"w\":[true,false],\"x\":null}]}}", "{\"a\":[[],{}],\"z\":{\"k\":\"v\",\"y\":[1,{\"w\":[true,false],\"x\":null}]}}", false},
		{"[1,-0,2.50,\"s\",null,{\"k\":[0]}]", "[1,-0,2.50,\"s\",null,{\"k\":[0]}]", "", true},
		{"{\"dup\":1,\"dup\":2}", "{\"dup\":2}", "{\"dup\":2}", false},
		{"{\"n\":{\"deep\":[1,2,{\"f\":3.25}]}}", "{\"n\":{\"deep\":[1,2,{\"f\":3.25}]}}", "", true},
	}
	for _, tc := range testCases {
		t.Run(tc.doc, func(t *testing.T) {
			v := decode(t, tc.doc)
			var buf bytes.Buffer
			if err := Write(&buf, v, Verbatim); err != nil || buf.String() != tc.verbatim {
				t.Errorf("Verbatim: %q, %v; want %q", buf.String(), err, tc.verbatim)
			}
			buf.Reset()
			err := Write(&buf, v, IntegersOnly)
			if tc.nonInteger {
				if !errors.Is(err, ErrNonInteger) {
					t.Errorf("IntegersOnly: %q, %v; want ErrNonInteger", buf.String(), err)
				}
				return
			}
			if err != nil || buf.String() != tc.integers {
				t.Errorf("IntegersOnly: %q, %v; want %q", buf.String(), err, tc.integers)
			}
		})
	}
}

// The plan fingerprint also writes values it builds: int path steps and
// string lists.
func TestBuiltValues(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, []any{3, []string{"a\"b", "c"}, map[string]any{"k": 7}}, Verbatim); err != nil {
		t.Fatal(err)
	}
	if want := "[3,[\"a\\\"b\",\"c\"],{\"k\":7}]"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// A refused number and an unsupported value are located from the root.
func TestPathError(t *testing.T) {
	testCases := []struct {
		name string
		v    any
		want []string
		err  error
	}{
		{"number deep in objects and arrays", decode(t, `{"n":{"deep":[1,2,{"f":3.25}]}}`), []string{"n", "deep", "2", "f"}, ErrNonInteger},
		{"number at the root", decode(t, `1.5`), nil, ErrNonInteger},
		{"unsupported value", map[string]any{"k": []any{1.5}}, []string{"k", "0"}, ErrUnsupported},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			var pe *PathError
			err := Write(&bytes.Buffer{}, tc.v, IntegersOnly)
			if !errors.As(err, &pe) || !errors.Is(err, tc.err) || !slices.Equal(pe.Path, tc.want) {
				t.Errorf("error %v (%#v), want path %v and %v", err, pe, tc.want, tc.err)
			}
		})
	}
}

func decode(t *testing.T, doc string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
