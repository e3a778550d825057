package plan

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestFingerprintKey(t *testing.T) {
	planJSON := doc([]string{res("null_resource.a", "create", `"after":{"a":"1"}`, "")}, nil)
	testCases := []struct {
		name    string
		key     []byte
		wantErr bool
	}{
		{name: "no key", key: nil, wantErr: true},
		{name: "empty key", key: []byte{}, wantErr: true},
		{name: "31 bytes", key: []byte(strings.Repeat("k", 31)), wantErr: true},
		{name: "32 bytes", key: []byte(strings.Repeat("k", 32))},
		{name: "64 bytes", key: []byte(strings.Repeat("k", 64))},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := Fingerprint(planJSON, tc.key)
			if tc.wantErr {
				if !errors.Is(err, ErrShortKey) || h != "" {
					t.Errorf("Fingerprint = %q, %v; want no hash and ErrShortKey", h, err)
				}
				// Even the empty plan never gets an unkeyed hash.
				if _, err := mustParse(t, doc(nil, nil)).Fingerprint(tc.key); !errors.Is(err, ErrShortKey) {
					t.Errorf("empty plan: err = %v, want ErrShortKey", err)
				}
				return
			}
			if err != nil || !strings.HasPrefix(h, "p2:") || len(h) != len("p2:")+64 {
				t.Errorf("Fingerprint = %q, %v; want a p2: hash", h, err)
			}
		})
	}
	t.Run("a short key fails before the plan is read", func(t *testing.T) {
		if _, err := Fingerprint([]byte("{"), nil); !errors.Is(err, ErrShortKey) {
			t.Errorf("err = %v, want ErrShortKey", err)
		}
	})
}

func TestEmptyPlanHash(t *testing.T) {
	sum := sha256.Sum256(nil)
	if want := "p2:" + hex.EncodeToString(sum[:]); EmptyPlanHash != want {
		t.Fatalf("EmptyPlanHash = %s, want %s", EmptyPlanHash, want)
	}
	otherKey := []byte(strings.Repeat("z", 40))
	for _, planJSON := range [][]byte{
		[]byte(`{"format_version":"1.2"}`),
		doc([]string{res("null_resource.a", "no-op", `"before":{"a":"1"},"after":{"a":"1"}`, "")},
			map[string]string{"o": changeObj("no-op", `"before":"x","after":"x"`)}),
	} {
		for _, key := range [][]byte{testKey, otherKey} {
			if h := mustFingerprint(t, planJSON, key); h != EmptyPlanHash {
				t.Errorf("Fingerprint of a plan without changes = %s, want EmptyPlanHash", h)
			}
		}
	}
}

// TestFingerprintLayout recomputes a two-change fingerprint by hand from
// the documented layout: sorted lines, "\n" between them, no trailing
// newline.
func TestFingerprintLayout(t *testing.T) {
	planJSON := doc(
		[]string{res("null_resource.b", "delete,create", `"before":{"t":"1"},"after":{"t":"2"}`, "")},
		map[string]string{"name": changeObj("create", `"before":null,"after":"x"`)},
	)
	mac := func(effect string) string {
		m := hmac.New(sha256.New, testKey)
		m.Write([]byte(effect))
		return hex.EncodeToString(m.Sum(nil))
	}
	text := "null_resource.b|delete,create|" + mac(`{"changes":[{"new":"2","old":"1","path":["t"]}]}`) + "\n" +
		"output.name|create|" + mac(`{"after":"x","output":true}`)
	sum := sha256.Sum256([]byte(text))
	want := "p2:" + hex.EncodeToString(sum[:])
	if got := mustFingerprint(t, planJSON, testKey); got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
}

func TestFingerprintDiffers(t *testing.T) {
	u := func(change string) []byte {
		return doc([]string{res("null_resource.a", "update", change, "")}, nil)
	}
	testCases := []struct {
		name string
		a, b []byte
	}{
		{
			name: "replace order",
			a:    doc([]string{res("null_resource.a", "delete,create", `"before":{"t":"1"},"after":{"t":"2"}`, "")}, nil),
			b:    doc([]string{res("null_resource.a", "create,delete", `"before":{"t":"1"},"after":{"t":"2"}`, "")}, nil),
		},
		{
			name: "new value of a touched attribute",
			a:    u(`"before":{"t":"1"},"after":{"t":"2"}`),
			b:    u(`"before":{"t":"1"},"after":{"t":"3"}`),
		},
		{
			name: "old value of a touched attribute",
			a:    u(`"before":{"t":"0"},"after":{"t":"2"}`),
			b:    u(`"before":{"t":"1"},"after":{"t":"2"}`),
		},
		{
			name: "old key absent vs old key null",
			a:    u(`"before":{},"after":{"t":"2"}`),
			b:    u(`"before":{"t":null},"after":{"t":"2"}`),
		},
		{
			name: "new key absent vs new key null",
			a:    u(`"before":{"t":"1"},"after":{}`),
			b:    u(`"before":{"t":"1"},"after":{"t":null}`),
		},
		{
			name: "list index vs map key",
			a:    u(`"before":{"t":["x"]},"after":{"t":["y"]}`),
			b:    u(`"before":{"t":{"0":"x"}},"after":{"t":{"0":"y"}}`),
		},
		{
			name: "number literal vs string",
			a:    u(`"before":{"n":1},"after":{"n":2}`),
			b:    u(`"before":{"n":1},"after":{"n":"2"}`),
		},
		{
			name: "known vs unknown after apply",
			a:    u(`"before":{"id":"1","t":"a"},"after":{"id":"1","t":"b"}`),
			b:    u(`"before":{"id":"1","t":"a"},"after":{"id":"1","t":"b"},"after_unknown":{"id":true}`),
		},
		{
			name: "unknown path differs",
			a:    u(`"before":{"l":["a","b"]},"after":{"l":[null,"b"]},"after_unknown":{"l":[true,false]}`),
			b:    u(`"before":{"l":["a","b"]},"after":{"l":[null,"b"]},"after_unknown":{"l":[false,true]}`),
		},
		{
			name: "attribute becomes sensitive",
			a:    u(`"before":{"p":"x","t":"1"},"after":{"p":"x","t":"2"},"before_sensitive":{},"after_sensitive":{}`),
			b:    u(`"before":{"p":"x","t":"1"},"after":{"p":"x","t":"2"},"before_sensitive":{},"after_sensitive":{"p":true}`),
		},
		{
			name: "attribute stops being sensitive",
			a:    u(`"before":{"p":"x","t":"1"},"after":{"p":"x","t":"2"},"before_sensitive":{"p":true},"after_sensitive":{"p":true}`),
			b:    u(`"before":{"p":"x","t":"1"},"after":{"p":"x","t":"2"},"before_sensitive":{"p":true},"after_sensitive":{}`),
		},
		{
			name: "create: planned value",
			a:    doc([]string{res("null_resource.a", "create", `"before":null,"after":{"t":"1"}`, "")}, nil),
			b:    doc([]string{res("null_resource.a", "create", `"before":null,"after":{"t":"2"}`, "")}, nil),
		},
		{
			name: "create: unknown marker",
			a:    doc([]string{res("null_resource.a", "create", `"after":{"t":"1"},"after_unknown":{"id":true}`, "")}, nil),
			b:    doc([]string{res("null_resource.a", "create", `"after":{"t":"1"},"after_unknown":{"t":true}`, "")}, nil),
		},
		{
			name: "create: sensitive marker",
			a:    doc([]string{res("null_resource.a", "create", `"after":{"t":"1"},"after_sensitive":{}`, "")}, nil),
			b:    doc([]string{res("null_resource.a", "create", `"after":{"t":"1"},"after_sensitive":{"t":true}`, "")}, nil),
		},
		{
			name: "read: planned value",
			a:    doc([]string{res("data.x.a", "read", `"after":{"q":"1"}`, "")}, nil),
			b:    doc([]string{res("data.x.a", "read", `"after":{"q":"2"}`, "")}, nil),
		},
		{
			name: "imported id on a no-op",
			a:    doc([]string{res("null_resource.a", "no-op", `"importing":{"id":"i-1"}`, "")}, nil),
			b:    doc([]string{res("null_resource.a", "no-op", `"importing":{"id":"i-2"}`, "")}, nil),
		},
		{
			name: "imported identity",
			a:    doc([]string{res("null_resource.a", "no-op", `"importing":{"identity":{"name":"a"}}`, "")}, nil),
			b:    doc([]string{res("null_resource.a", "no-op", `"importing":{"identity":{"name":"b"}}`, "")}, nil),
		},
		{
			name: "delete carries its move",
			a:    doc([]string{res("null_resource.a", "delete", "", `"previous_address":"null_resource.x"`)}, nil),
			b:    doc([]string{res("null_resource.a", "delete", "", `"previous_address":"null_resource.y"`)}, nil),
		},
		{
			name: "delete carries its import",
			a:    doc([]string{res("null_resource.a", "delete", "", "")}, nil),
			b:    doc([]string{res("null_resource.a", "delete", `"importing":{"id":"1"}`, "")}, nil),
		},
		{
			name: "forget carries its move",
			a:    doc([]string{res("null_resource.a", "forget", "", "")}, nil),
			b:    doc([]string{res("null_resource.a", "forget", "", `"previous_address":"null_resource.y"`)}, nil),
		},
		{
			name: "deposed object vs current object",
			a:    doc([]string{res("null_resource.a", "delete", "", "")}, nil),
			b:    doc([]string{res("null_resource.a", "delete", "", `"deposed":"00000001"`)}, nil),
		},
		{
			name: "output new value",
			a:    doc(nil, map[string]string{"o": changeObj("update", `"before":"a","after":"b"`)}),
			b:    doc(nil, map[string]string{"o": changeObj("update", `"before":"a","after":"c"`)}),
		},
		{
			name: "output becomes sensitive",
			a:    doc(nil, map[string]string{"o": changeObj("update", `"before":"a","after":"b","before_sensitive":false,"after_sensitive":false`)}),
			b:    doc(nil, map[string]string{"o": changeObj("update", `"before":"a","after":"b","before_sensitive":false,"after_sensitive":true`)}),
		},
		{
			name: "output vs resource of the same name",
			a:    doc(nil, map[string]string{"a": changeObj("create", `"after":"b"`)}),
			b:    doc([]string{res("output.a", "create", `"after":"b"`, "")}, nil),
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			ha, hb := mustFingerprint(t, tc.a, testKey), mustFingerprint(t, tc.b, testKey)
			if ha == hb {
				t.Errorf("both plans hash to %s, want different hashes", ha)
			}
		})
	}
}

func TestFingerprintSame(t *testing.T) {
	u := func(change string) []byte {
		return doc([]string{res("null_resource.a", "update", change, "")}, nil)
	}
	testCases := []struct {
		name string
		a, b []byte
	}{
		{
			name: "object key order and white space",
			a:    u(`"before":{"a":"1","b":{"x":1,"y":2}},"after":{"a":"2","b":{"x":1,"y":3}}`),
			b:    []byte(strings.ReplaceAll(string(u(`"after":{"b":{"y":3,"x":1},"a":"2"},"before":{"b":{"y":2,"x":1},"a":"1"}`)), ",", " ,\n ")),
		},
		{
			name: "resource and output order",
			a: doc([]string{res("a.a", "create", `"after":{}`, ""), res("a.b", "delete", "", "")},
				map[string]string{"x": changeObj("create", `"after":1`), "y": changeObj("delete", `"before":1`)}),
			b: doc([]string{res("a.b", "delete", "", ""), res("a.a", "create", `"after":{}`, "")},
				map[string]string{"y": changeObj("delete", `"before":1`), "x": changeObj("create", `"after":1`)}),
		},
		{
			name: "untouched attribute (hidden drift) does not count",
			a:    u(`"before":{"t":"1","drifted":"old"},"after":{"t":"2","drifted":"old"}`),
			b:    u(`"before":{"t":"1","drifted":"new"},"after":{"t":"2","drifted":"new"}`),
		},
		{
			name: "untouched list element does not count",
			a:    u(`"before":{"l":["a","x"]},"after":{"l":["b","x"]}`),
			b:    u(`"before":{"l":["a","y"]},"after":{"l":["b","y"]}`),
		},
		{
			name: "no-op resource values do not count",
			a:    doc([]string{res("a.a", "create", `"after":{}`, ""), res("a.b", "no-op", `"before":{"v":"1"},"after":{"v":"1"}`, "")}, nil),
			b:    doc([]string{res("a.a", "create", `"after":{}`, ""), res("a.b", "no-op", `"before":{"v":"2"},"after":{"v":"2"}`, "")}, nil),
		},
		{
			name: "unchanged sensitive marker does not count",
			a:    u(`"before":{"t":"1"},"after":{"t":"2"}`),
			b:    u(`"before":{"t":"1","p":"x"},"after":{"t":"2","p":"x"},"before_sensitive":{"p":true},"after_sensitive":{"p":true}`),
		},
		{
			name: "false unknown markers are no markers",
			a:    u(`"before":{"t":"1"},"after":{"t":"2"},"after_unknown":{}`),
			b:    u(`"before":{"t":"1"},"after":{"t":"2"},"after_unknown":{"t":false,"l":[false]}`),
		},
		{
			name: "delete values are not bound",
			a:    doc([]string{res("a.a", "delete", `"before":{"v":"1"},"after":null`, "")}, nil),
			b:    doc([]string{res("a.a", "delete", `"before":{"v":"2"},"after":null`, "")}, nil),
		},
		{
			name: "volatile top-level members do not count",
			a:    []byte(`{"format_version":"1.2","timestamp":"2026-01-01T00:00:00Z","resource_changes":[` + res("a.a", "create", `"after":{}`, "") + `]}`),
			b:    []byte(`{"format_version":"1.2","timestamp":"2026-02-02T00:00:00Z","resource_changes":[` + res("a.a", "create", `"after":{}`, "") + `]}`),
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			ha, hb := mustFingerprint(t, tc.a, testKey), mustFingerprint(t, tc.b, testKey)
			if ha != hb {
				t.Errorf("hashes differ (%s vs %s), want the same", ha, hb)
			}
		})
	}
}

func TestFingerprintKeyMatters(t *testing.T) {
	planJSON := doc([]string{res("null_resource.a", "update", `"before":{"t":"1"},"after":{"t":"2"}`, "")}, nil)
	other := append([]byte{}, testKey...)
	other[31] ^= 1
	if mustFingerprint(t, planJSON, testKey) == mustFingerprint(t, planJSON, other) {
		t.Error("two keys give the same hash")
	}
}
