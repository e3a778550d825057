package state

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"sync"
	"testing"
)

// FuzzDecode feeds Decode arbitrary Secrets. payload is either the stored
// (gzipped) bytes, or, when plain is set, a JSON document the target gzips
// itself so that mutations explore the JSON side too. The bytes are split
// into one to three chunks. Decode must never panic, never succeed beyond
// MaxStateBytes, allocate within a bound, and for plain payloads agree with
// an oracle built on encoding/json.
func FuzzDecode(f *testing.F) {
	// Small seeds: the fuzzer minimises every new finding, and that takes
	// time proportional to the input's size.
	const compact = `{"version":4,"terraform_version":"1.8.5","serial":7,"lineage":"l",` +
		`"outputs":{"a":{"value":{"k":[1,true]},"type":"string","sensitive":true}},` +
		`"resources":[{"mode":"managed","instances":[{"attributes":{"id":"1"}}]},{"mode":"data"}]}`
	seeds := []struct {
		payload []byte
		plain   bool
	}{
		{[]byte(compact), true},
		{gz(f, compact), false},
		{[]byte(`{"version": 4, "encryption_version": "v0", "encrypted_data": "x"}`), true},
		{[]byte(`{"version": 3}`), true},
		{[]byte(`{"version": 4, "outputs": {"a": {"value": "\u00e9", "sensitive": null}}, "resources": [null, {"mode": "m\u0061naged"}]}`), true},
		{[]byte(`{"version": 4, "outputs": [], "serial": -1}`), true},
		{[]byte(deep(40)), true},
		{[]byte("{\"version\": 4} trailing"), true},
		{gz(f, compact)[:40], false},
		{[]byte("not gzip at all"), false},
		// A bomb small enough for the fuzzer to mutate quickly; the ones
		// past MaxStateBytes are in TestDecodeErrors.
		{gzipBomb("{", ' ', 1000), false},
	}
	for _, s := range seeds {
		f.Add(s.payload, s.plain, uint16(0), uint16(0), false)
		f.Add(s.payload, s.plain, uint16(7), uint16(300), true)
	}
	f.Fuzz(func(t *testing.T, payload []byte, plain bool, cut1, cut2 uint16, smallViews bool) {
		data := payload
		if plain {
			data = fastGzip(payload)
		}
		pieces := [][]byte{data}
		for _, c := range []uint16{cut1, cut2} {
			last := pieces[len(pieces)-1]
			if at := int(c); at > 0 && at < len(last) {
				pieces = append(pieces[:len(pieces)-1], last[:at], last[at:])
			}
		}
		step := blockSize
		if smallViews {
			step = 1
		}
		secrets := secretsFor(pieces...)

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st, raw, err := decode(testSuffix, secrets, true, step)
		runtime.ReadMemStats(&after)

		// The blocks take a megabyte. The window, the raw JSON and the
		// outputs hold at most the decompressed state, which deflate's ratio
		// and MaxStateBytes bound, and growing by doubling allocates at
		// most twice what is held.
		limit := min(maxDeflateRatio*len(data), MaxStateBytes+1)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(8*limit+2<<20) {
			t.Errorf("allocated %d bytes for %d compressed bytes", alloc, len(data))
		}
		if err == nil {
			if len(raw) > MaxStateBytes {
				t.Fatalf("accepted a state of %d bytes, over MaxStateBytes", len(raw))
			}
			if want := firstMember(t, data); !bytes.Equal(raw, want) {
				t.Fatalf("JSON read differs from the first gzip member")
			}
		} else if r, ok := ReasonOf(err); !ok || r != ReasonCorrupt && r != ReasonEncrypted {
			t.Fatalf("Decode() error = %v (reason %q), want a corrupt or encrypted *Error", err, r)
		}
		if plain && json.Valid(payload) && !hasDuplicateKeys(payload) {
			compareWithOracle(t, payload, st, err)
		}
		if plain && !json.Valid(payload) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("invalid JSON gave error %v, want corrupt", err)
		}
	})
}

// gzipWriters keeps gzip writers across fuzz runs: a new one allocates over
// a megabyte, which would dominate every run.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

func fastGzip(b []byte) []byte {
	var buf bytes.Buffer
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&buf)
	_, _ = w.Write(b) // writes to a bytes.Buffer do not fail
	_ = w.Close()
	return buf.Bytes()
}

func firstMember(t *testing.T, data []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("accepted data gzip cannot open: %v", err)
	}
	zr.Multistream(false)
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("accepted data gzip cannot read: %v", err)
	}
	return b
}

// oracle decodes a valid JSON document with encoding/json, matching member
// names exactly as the runtimes write them.
func oracle(doc []byte) (*State, Reason) {
	var top map[string]json.RawMessage
	if json.Unmarshal(doc, &top) != nil {
		return nil, ReasonCorrupt
	}
	if _, ok := top["encryption_version"]; ok {
		return nil, ReasonEncrypted
	}
	var version int64
	if v, ok := top["version"]; !ok || json.Unmarshal(v, &version) != nil || version != StateVersion {
		return nil, ReasonCorrupt
	}
	st := &State{}
	var outputs map[string]map[string]json.RawMessage
	var resources []map[string]json.RawMessage
	for member, into := range map[string]any{
		"serial": &st.Serial, "lineage": &st.Lineage, "terraform_version": &st.TerraformVersion,
		"outputs": &outputs, "resources": &resources,
	} {
		if v, ok := top[member]; ok && json.Unmarshal(v, into) != nil {
			return nil, ReasonCorrupt
		}
	}
	if outputs != nil {
		st.Outputs = map[string]Output{}
	}
	for name, fields := range outputs {
		o := Output{Value: fields["value"], Type: fields["type"]}
		if v, ok := fields["sensitive"]; ok && json.Unmarshal(v, &o.Sensitive) != nil {
			return nil, ReasonCorrupt
		}
		st.Outputs[name] = o
	}
	for _, r := range resources {
		var mode string
		if v, ok := r["mode"]; ok && json.Unmarshal(v, &mode) != nil {
			return nil, ReasonCorrupt
		}
		if mode == "managed" {
			st.ManagedResources++
		}
	}
	if st.Serial < 0 {
		return nil, ReasonCorrupt
	}
	return st, ""
}

func compareWithOracle(t *testing.T, doc []byte, got *State, err error) {
	t.Helper()
	want, wantReason := oracle(doc)
	gotReason, _ := ReasonOf(err)
	if gotReason != wantReason {
		t.Fatalf("Decode() reason %q (%v), encoding/json oracle says %q", gotReason, err, wantReason)
	}
	if want == nil {
		return
	}
	if got.Serial != want.Serial || got.Lineage != want.Lineage || got.TerraformVersion != want.TerraformVersion ||
		got.ManagedResources != want.ManagedResources || len(got.Outputs) != len(want.Outputs) {
		t.Fatalf("Decode() = %v, oracle says %v", got, want)
	}
	for name, w := range want.Outputs {
		g, ok := got.Outputs[name]
		if !ok || !bytes.Equal(g.Value, w.Value) || !bytes.Equal(g.Type, w.Type) || g.Sensitive != w.Sensitive {
			t.Fatalf("output %q = %s %s %v, oracle says %s %s %v", name, g.Value, g.Type, g.Sensitive, w.Value, w.Type, w.Sensitive)
		}
	}
}

// hasDuplicateKeys reports whether any object in a valid document repeats
// a key; which one wins is then a matter of taste, not of correctness.
func hasDuplicateKeys(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				key, _ := dec.Token()
				k, _ := key.(string)
				if seen[k] || walk() {
					return true
				}
				seen[k] = true
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			_, _ = dec.Token()
		}
		return false
	}
	return walk()
}
