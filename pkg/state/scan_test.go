package state

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/iotest"
)

// scanValid runs the scanner over b as one buffer, or fed one byte at a
// time so that every token straddles the end of what has arrived.
func scanValid(b []byte, oneByte bool) bool {
	s := &scanner{b: b, hold: -1}
	if oneByte {
		in := startInflate(iotest.OneByteReader(bytes.NewReader(b)), 1)
		defer in.stop()
		s = newScanner(in, false, 0)
	}
	if !s.skipValue(0) {
		return false
	}
	s.skipSpace()
	return s.atEnd()
}

func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	long := strings.Repeat("abcdefgh", 5)
	testCases := []string{
		``, ` `, `0`, `-0`, `-`, `01`, `-01`, `1.`, `.5`, `1.5`, `1e`, `1e+`, `1e+5`, `1E-5`, `2.5e10`, `1x`,
		`true`, `tru`, `truex`, `false`, `null`, `nul`, `nulll`, `True`,
		`""`, `"a"`, `"\u00e9"`, `"\u00"`, `"\u00zz"`, `"\x"`, `"\/"`, `"\\"`, `"\""`, "\"a\x01\"", "\"\xff\xfe\"",
		`"` + long + `"`, `"` + long + `\"` + long + `"`, `"` + long[:7] + `\n"`, `"` + long[:8] + "\x1f" + `"`, `"` + long,
		`[]`, `[1]`, `[1,]`, `[,1]`, `[1 2]`, `[[[]]]`, `[[]`, `[]]`,
		`{}`, `{"a":1}`, `{"a":}`, `{"a" 1}`, `{,}`, `{"a":1,}`, `{"a":1}}`, `{1:2}`, `{"a":1 "b":2}`,
		" \t\r\n{\"a\" : [ 1 , { } ] }\n ", "{\"a\":1}\x00", "\ufeff{}",
		strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
		strings.Repeat(`{"a":`, maxDepth) + "1" + strings.Repeat("}", maxDepth),
		strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1),
		smallState,
	}
	for _, in := range testCases {
		name := in
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			want := json.Valid([]byte(in))
			for _, oneByte := range []bool{false, true} {
				if got := scanValid([]byte(in), oneByte); got != want {
					t.Errorf("scanner says valid = %v (one byte at a time: %v), encoding/json says %v", got, oneByte, want)
				}
			}
		})
	}
}

// TestDecodeAcrossViews decodes with the inflater publishing after every
// read of one compressed byte, so that keys, numbers, escapes and literals
// are split across views, and expects the same result as in one piece.
func TestDecodeAcrossViews(t *testing.T) {
	testCases := []string{
		smallState,
		`{"version": 4, "serial": 123456789, "lineage": "a\u00e9\"b", "outputs": {"n\u0061me": {"value": [1.5e3, true, false, null], "type": ["tuple", ["number"]]}}}`,
		`{"version": 4, "encryption_version": "v0"}`,
		`{"version": 4, "serial": 12`,
	}
	for _, in := range testCases {
		t.Run(in[:20], func(t *testing.T) {
			compressed := gz(t, in)
			want, wantRaw, wantErr := decodeStream(bytes.NewReader(compressed), blockSize, true, 0)
			got, gotRaw, gotErr := decodeStream(iotest.OneByteReader(bytes.NewReader(compressed)), 1, true, 0)
			if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Message != gotErr.Message {
				t.Fatalf("error = %v, want %v", gotErr, wantErr)
			}
			if wantErr != nil {
				return
			}
			if !bytes.Equal(gotRaw, wantRaw) {
				t.Errorf("JSON differs when read in small views")
			}
			if got.String() != want.String() || len(got.Outputs) != len(want.Outputs) {
				t.Errorf("state = %v, want %v", got, want)
			}
			for name, o := range want.Outputs {
				if g := got.Outputs[name]; !bytes.Equal(g.Value, o.Value) || !bytes.Equal(g.Type, o.Type) {
					t.Errorf("output %q differs when read in small views", name)
				}
			}
		})
	}
}
