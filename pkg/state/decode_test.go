package state

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// marker is the value of a sensitive output: no error message may carry it.
const marker = "s3cr3t-marker"

const smallState = `{
  "version": 4,
  "terraform_version": "1.8.5",
  "serial": 7,
  "lineage": "8b1f4c3e-lineage",
  "outputs": {
    "endpoint": {"value": {"host": "10.0.0.1", "port": 6443}, "type": ["object", {"host": "string", "port": "number"}]},
    "kubeconfig": {"value": "` + marker + `", "type": "string", "sensitive": true},
    "tags": {"value": null, "type": "dynamic", "sensitive": false}
  },
  "resources": [
    {"mode": "managed", "type": "null_resource", "name": "counted", "provider": "provider[\"registry.terraform.io/hashicorp/null\"]",
     "instances": [{"index_key": 0, "attributes": {"id": "1"}}, {"index_key": 1, "attributes": {"id": "2"}}, {"index_key": 2, "attributes": {"id": "3"}}]},
    {"mode": "managed", "type": "random_id", "name": "each", "each": "map", "instances": [{"index_key": "a", "attributes": {"hex": "` + marker + `"}}]},
    {"mode": "data", "type": "local_file", "name": "read", "instances": [{"attributes": {"content": "x"}}]},
    {"module": "module.net", "mode": "managed", "type": "null_resource", "name": "inner", "instances": []}
  ],
  "check_results": null
}
`

func gz(t testing.TB, s string) []byte { return gzipBytes(t, []byte(s), gzip.DefaultCompression) }

func TestDecodeState(t *testing.T) {
	secrets := secretsFor(gz(t, smallState))
	st, err := Decode(testSuffix, secrets)
	if err != nil {
		t.Fatalf("Decode() error = %v", err)
	}
	if st.Serial != 7 || st.Lineage != "8b1f4c3e-lineage" || st.TerraformVersion != "1.8.5" {
		t.Errorf("Decode() = serial %d, lineage %q, version %q; want 7, 8b1f4c3e-lineage, 1.8.5",
			st.Serial, st.Lineage, st.TerraformVersion)
	}
	if st.ManagedResources != 3 {
		t.Errorf("ManagedResources = %d, want 3 (a counted block once, no data source)", st.ManagedResources)
	}
	wantOutputs := map[string]Output{
		"endpoint":   {Value: []byte(`{"host": "10.0.0.1", "port": 6443}`), Type: []byte(`["object", {"host": "string", "port": "number"}]`)},
		"kubeconfig": {Value: []byte(`"` + marker + `"`), Type: []byte(`"string"`), Sensitive: true},
		"tags":       {Value: []byte(`null`), Type: []byte(`"dynamic"`)},
	}
	if len(st.Outputs) != len(wantOutputs) {
		t.Errorf("Decode() has %d outputs, want %d", len(st.Outputs), len(wantOutputs))
	}
	for name, want := range wantOutputs {
		got := st.Outputs[name]
		if !bytes.Equal(got.Value, want.Value) || !bytes.Equal(got.Type, want.Type) || got.Sensitive != want.Sensitive {
			t.Errorf("output %s = %s %s %v, want %s %s %v", name, got.Value, got.Type, got.Sensitive, want.Value, want.Type, want.Sensitive)
		}
	}
	if want := int64(len(secrets[0].Data[DataKey])); st.CompressedBytes != want {
		t.Errorf("CompressedBytes = %d, want %d", st.CompressedBytes, want)
	}
	if len(st.Secrets) != 1 || st.Secrets[0] != (SecretRef{secrets[0].Name, secrets[0].ResourceVersion}) {
		t.Errorf("Secrets = %v, want the base Secret", st.Secrets)
	}
	if st.Fingerprint != Fingerprint(secrets) {
		t.Errorf("Fingerprint = %q, want Fingerprint(secrets) %q", st.Fingerprint, Fingerprint(secrets))
	}
}

func TestDecodeValid(t *testing.T) {
	big, _ := genState(t, genOptions{size: 6 << 20, privateBytes: 2048})
	bigGz := gzipBytes(t, big, gzip.BestSpeed)
	pieces := cut(bigGz, ChunkSize)
	if len(pieces) < 3 {
		t.Fatalf("test state compresses to %d pieces, want at least 3", len(pieces))
	}
	shrunk, _ := genState(t, genOptions{size: 3 << 20, privateBytes: 2048})
	shrunk = bytes.Replace(shrunk, []byte(`"serial": 42`), []byte(`"serial": 43`), 1)
	shrunkPieces := cut(gzipBytes(t, shrunk, gzip.BestSpeed), ChunkSize)
	if len(shrunkPieces) >= len(pieces) {
		t.Fatalf("shrunk state has %d pieces, want fewer than %d", len(shrunkPieces), len(pieces))
	}
	small := gz(t, smallState)

	testCases := []struct {
		name    string
		secrets []corev1.Secret
		want    []byte
		wantN   int
	}{
		{name: "one Secret", secrets: secretsFor(small), want: []byte(smallState), wantN: 1},
		{name: "1 MiB pieces as Terraform cuts them", secrets: secretsFor(pieces...), want: big, wantN: len(pieces)},
		{name: "pieces listed in any order", secrets: reversed(secretsFor(pieces...)), want: big, wantN: len(pieces)},
		{
			name: "surplus chunk left by a shrink is ignored",
			secrets: append(secretsFor(shrunkPieces...),
				secretsFor(pieces...)[len(shrunkPieces):]...),
			want: shrunk, wantN: len(pieces),
		},
		{name: "bytes after the gzip member", secrets: secretsFor(append(small, "stale bytes"...)), want: []byte(smallState), wantN: 1},
		{name: "second gzip member ignored", secrets: secretsFor(append(small, gz(t, "not json")...)), want: []byte(smallState), wantN: 1},
		{name: "a chunk of a few bytes", secrets: secretsFor(small[:len(small)-3], small[len(small)-3:]), want: []byte(smallState), wantN: 2},
		{name: "nothing but a version", secrets: secretsFor(gz(t, ` {"version": 4} `)), want: []byte(` {"version": 4} `), wantN: 1},
		{
			name:    "nesting as deep as encoding/json allows",
			secrets: secretsFor(gz(t, deep(maxDepth-1))),
			want:    []byte(deep(maxDepth - 1)), wantN: 1,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			st, raw, err := DecodeRaw(testSuffix, tc.secrets)
			if err != nil {
				t.Fatalf("DecodeRaw() error = %v", err)
			}
			if !bytes.Equal(raw, tc.want) {
				t.Errorf("DecodeRaw() JSON differs from the state written (%d bytes, want %d)", len(raw), len(tc.want))
			}
			if len(st.Secrets) != tc.wantN {
				t.Errorf("read %d Secrets, want %d", len(st.Secrets), tc.wantN)
			}
			var compressed int64
			for i, s := range st.Secrets {
				if s.Name != ChunkName(testSuffix, i) {
					t.Errorf("Secrets[%d] = %s, want %s", i, s.Name, ChunkName(testSuffix, i))
				}
			}
			for _, s := range tc.secrets {
				compressed += int64(len(s.Data[DataKey]))
			}
			if st.CompressedBytes != compressed {
				t.Errorf("CompressedBytes = %d, want %d", st.CompressedBytes, compressed)
			}
		})
	}
}

// deep is a state with a member nested depth levels below the top object.
func deep(depth int) string {
	return `{"version": 4, "x": ` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}"
}

func reversed(s []corev1.Secret) []corev1.Secret {
	out := make([]corev1.Secret, len(s))
	for i := range s {
		out[len(s)-1-i] = s[i]
	}
	return out
}

func TestDecodeErrors(t *testing.T) {
	small := gz(t, smallState)
	named := func(name string, data []byte) corev1.Secret { return stateSecret(name, data) }
	keyless := func(name string) corev1.Secret {
		s := stateSecret(name, nil)
		s.Data = map[string][]byte{"other": small}
		return s
	}
	three := cut(small, len(small)/3+1)
	badCRC := bytes.Clone(small)
	badCRC[len(badCRC)-6] ^= 0xff
	var many []corev1.Secret
	for i := range MaxChunks + 1 {
		many = append(many, named(ChunkName(testSuffix, i), []byte("never read")))
	}
	base, part := SecretName(testSuffix), SecretName(testSuffix)+"-part-"
	encrypted := `{"serial": 1, "lineage": "x", "meta": {"key_provider.pbkdf2.main": "e30="}, "encrypted_data": "` + marker + `", "encryption_version": "v0"}`
	states := map[string]string{
		"encrypted, version 3":      `{"version": 3, "encryption_version": "v0", "encrypted_data": "` + marker + `"}`,
		"version 3":                 strings.Replace(smallState, `"version": 4`, `"version": 3`, 1),
		"version as a string":       strings.Replace(smallState, `"version": 4`, `"version": "4"`, 1),
		"no version":                strings.Replace(smallState, `"version": 4,`, ``, 1),
		"serial not a number":       strings.Replace(smallState, `"serial": 7`, `"serial": "`+marker+`"`, 1),
		"outputs not an object":     `{"version": 4, "outputs": ["` + marker + `"]}`,
		"mode not a string":         `{"version": 4, "resources": [{"mode": 1}]}`,
		"data after the object":     smallState + `{}`,
		"not JSON":                  marker + " is not JSON",
		"JSON array":                `["` + marker + `"]`,
		"string with a raw newline": `{"version": 4, "lineage": "a` + "\n" + marker + `"}`,
	}

	testCases := []struct {
		name    string
		secrets []corev1.Secret
		want    error
		wantIn  string
	}{
		{name: "no Secret", want: ErrNotFound, wantIn: "no state Secret " + base},
		{name: "missing base", secrets: []corev1.Secret{named(part+"1", small)}, want: ErrInconsistent, wantIn: "base state Secret " + base + " is missing"},
		{name: "gap", secrets: []corev1.Secret{named(base, three[0]), named(part+"2", three[2])}, want: ErrInconsistent, wantIn: part + "1 is missing"},
		{name: "duplicate index", secrets: []corev1.Secret{named(base, three[0]), named(part+"1", three[1]), named(part+"1", three[1])}, want: ErrInconsistent, wantIn: "appears twice"},
		{name: "more than 32 Secrets", secrets: many, want: ErrCorrupt, wantIn: "33 Secrets"},
		{name: "part number with a leading zero", secrets: []corev1.Secret{named(base, three[0]), named(part+"01", three[1])}, want: ErrInconsistent, wantIn: "unexpected name"},
		{name: "part 0", secrets: []corev1.Secret{named(base, small), named(part+"0", small)}, want: ErrInconsistent, wantIn: "unexpected name"},
		{name: "suffix followed by other digits", secrets: []corev1.Secret{named(base, small), named(base+"-1", small)}, want: ErrInconsistent, wantIn: "unexpected name"},
		{name: "another suffix", secrets: []corev1.Secret{named("tfstate-default-fedcba9876543210-m", small)}, want: ErrInconsistent, wantIn: "unexpected name"},
		{name: "base without tfstate key", secrets: []corev1.Secret{keyless(base)}, want: ErrInconsistent, wantIn: `no "tfstate" data key`},
		{name: "part without tfstate key", secrets: []corev1.Secret{named(base, small), keyless(part + "1")}, want: ErrInconsistent, wantIn: `no "tfstate" data key`},
		{name: "not gzip", secrets: secretsFor([]byte(smallState)), want: ErrCorrupt, wantIn: "not valid gzip"},
		{name: "empty data", secrets: secretsFor([]byte{}), want: ErrCorrupt, wantIn: "truncated"},
		{name: "truncated gzip", secrets: secretsFor(small[:len(small)/2]), want: ErrCorrupt, wantIn: "truncated"},
		{name: "last chunk missing", secrets: secretsFor(three[0], three[1]), want: ErrCorrupt, wantIn: "truncated"},
		{name: "bad checksum", secrets: secretsFor(badCRC), want: ErrCorrupt, wantIn: "checksum"},
		{name: "gzip bomb of 1 GiB of zeros", secrets: secretsFor(gzipBomb("", 0, gibRepeats)), want: ErrCorrupt, wantIn: "not valid JSON"},
		{name: "1 GiB of whitespace in the object", secrets: secretsFor(gzipBomb("{", ' ', gibRepeats)), want: ErrCorrupt, wantIn: "exceeds 64 MiB"},
		{name: "nesting deeper than encoding/json allows", secrets: secretsFor(gz(t, deep(maxDepth))), want: ErrCorrupt, wantIn: "nesting deeper than 10000"},
		{name: "encrypted", secrets: secretsFor(gz(t, encrypted)), want: ErrEncrypted, wantIn: "encrypted"},
		{name: "encrypted, version 3", want: ErrEncrypted, wantIn: "encrypted"},
		{name: "version 3", want: ErrCorrupt, wantIn: "unsupported state version 3"},
		{name: "version as a string", want: ErrCorrupt, wantIn: "unsupported state version"},
		{name: "no version", want: ErrCorrupt, wantIn: "no version"},
		{name: "serial not a number", want: ErrCorrupt, wantIn: `"serial" has the wrong JSON type`},
		{name: "outputs not an object", want: ErrCorrupt, wantIn: `"outputs" has the wrong JSON type`},
		{name: "mode not a string", want: ErrCorrupt, wantIn: `"resources" has the wrong JSON type`},
		{name: "data after the object", want: ErrCorrupt, wantIn: "data after the state object"},
		{name: "not JSON", want: ErrCorrupt, wantIn: "not valid JSON"},
		{name: "JSON array", want: ErrCorrupt, wantIn: "not a JSON object"},
		{name: "string with a raw newline", want: ErrCorrupt, wantIn: "control character"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			secrets := tc.secrets
			if s, ok := states[tc.name]; ok {
				secrets = secretsFor(gz(t, s))
			}
			st, err := Decode(testSuffix, secrets)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode() error = %v, want %v", err, tc.want)
			}
			if st != nil {
				t.Errorf("Decode() returned a state with the error: %v", st)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Decode() error %T is not an *Error", err)
			}
			if !strings.Contains(se.Message, tc.wantIn) {
				t.Errorf("message %q does not name the cause %q", se.Message, tc.wantIn)
			}
			if strings.Contains(err.Error(), marker) {
				t.Errorf("message %q carries state content", err.Error())
			}
			if se.Fingerprint != Fingerprint(secrets) {
				t.Errorf("Error.Fingerprint = %q, want Fingerprint(secrets) %q", se.Fingerprint, Fingerprint(secrets))
			}
		})
	}
}

// TestSizeHint checks that the decompressed state lands in a buffer
// allocated once at its size, and that a forged gzip size cannot make the
// reader allocate more than the compressed bytes can expand to.
func TestSizeHint(t *testing.T) {
	js, _ := genState(t, genOptions{size: 3 << 20, privateBytes: 2048})
	data := gzipBytes(t, js, gzip.BestSpeed)
	pieces := cut(data, ChunkSize)
	stale := bytes.Repeat([]byte{0xee}, ChunkSize) // a trailer claiming 3.7 GiB
	forged := append(bytes.Clone(data[:len(data)-4]), 0xff, 0xff, 0xff, 0x7f)
	chunksOf := func(pieces ...[]byte) []chunk {
		var cs []chunk
		for i, p := range pieces {
			cs = append(cs, chunk{index: i, data: p})
		}
		return cs
	}
	testCases := []struct {
		name   string
		chunks []chunk
		want   int
	}{
		{name: "one Secret", chunks: chunksOf(data), want: len(js) + 1},
		{name: "1 MiB pieces", chunks: chunksOf(pieces...), want: len(js) + 1},
		{name: "surplus pieces after a shrink", chunks: chunksOf(append(pieces, stale, stale[:100])...), want: MaxStateBytes + 1},
		{name: "pieces of any size", chunks: chunksOf(cut(data, len(data)/5)...), want: len(js) + 1},
		{name: "trailer split across pieces", chunks: chunksOf(data[:len(data)-2], data[len(data)-2:]), want: len(js) + 1},
		{name: "forged size capped", chunks: chunksOf(forged[:100], forged[len(forged)-8:]), want: maxDeflateRatio*108 + 1},
		{name: "forged size capped at the limit", chunks: chunksOf(forged), want: MaxStateBytes + 1},
		{name: "too short for a trailer", chunks: chunksOf([]byte{1, 2}), want: 0},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sizeHint(tc.chunks); got != tc.want {
				t.Errorf("sizeHint() = %d, want %d", got, tc.want)
			}
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestDecodeStopsAtLimit checks that a gzip bomb costs what the limit
// allows and no more: the read stops once the limit is crossed (or the
// JSON is invalid), long before the end of the compressed input, and the
// memory taken stays within the limit.
func TestDecodeStopsAtLimit(t *testing.T) {
	testCases := []struct {
		name     string
		bomb     []byte
		wantIn   string
		maxShare float64 // of the compressed input read
	}{
		{name: "1 GiB of whitespace", bomb: gzipBomb("{", ' ', gibRepeats), wantIn: "exceeds 64 MiB", maxShare: 0.08},
		{name: "1 GiB of zeros", bomb: gzipBomb("", 0, gibRepeats), wantIn: "not valid JSON", maxShare: 0.01},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			in := &countingReader{r: bytes.NewReader(tc.bomb)}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := decodeStream(in, blockSize, false, 0)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Message, tc.wantIn) {
				t.Fatalf("decodeStream() error = %v, want %q", err, tc.wantIn)
			}
			if share := float64(in.n) / float64(len(tc.bomb)); share > tc.maxShare {
				t.Errorf("read %.1f%% of the compressed input, want at most %.1f%%", 100*share, 100*tc.maxShare)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > MaxStateBytes+8<<20 {
				t.Errorf("allocated %d MiB, want at most the limit and a little", alloc>>20)
			}
		})
	}
}

// TestDecodeLimitBoundary reads a state of exactly MaxStateBytes and one
// of a byte more.
func TestDecodeLimitBoundary(t *testing.T) {
	// sized returns a valid state of exactly n bytes, gzipped.
	sized := func(n int) []byte {
		head, tail := `{"version": 4, "pad": "`, `"}`
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		_, _ = w.Write([]byte(head))
		pad := bytes.Repeat([]byte{'x'}, 1<<20)
		for left := n - len(head) - len(tail); left > 0; left -= len(pad) {
			_, _ = w.Write(pad[:min(left, len(pad))])
		}
		_, _ = w.Write([]byte(tail))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	testCases := []struct {
		name    string
		size    int
		wantErr error
	}{
		{name: "at the limit", size: MaxStateBytes},
		{name: "one byte over", size: MaxStateBytes + 1, wantErr: ErrCorrupt},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, raw, err := DecodeRaw(testSuffix, secretsFor(sized(tc.size)))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("DecodeRaw() error = %v, want %v", err, tc.wantErr)
			}
			if err == nil && len(raw) != tc.size {
				t.Errorf("read %d bytes, want %d", len(raw), tc.size)
			}
		})
	}
}
