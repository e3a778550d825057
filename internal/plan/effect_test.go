package plan

import (
	"bytes"
	"testing"
)

// TestEffectEncoding pins the canonical effect of representative changes:
// the bytes every plan key HMACs. Changing one of these is a change of the
// p2 fingerprint and invalidates every pending approval.
func TestEffectEncoding(t *testing.T) {
	testCases := []struct {
		name     string
		resource string
		want     string
	}{
		{
			name:     "update: only touched leaves, typed path steps, absent vs null",
			resource: res("a.a", "update", `"before":{"same":"x","t":{"k":"1"},"l":["a","b"],"gone":"g","was_null":null},"after":{"same":"x","t":{"k":"2"},"l":["a","c","d"],"was_null":"v","now_null":null}`, ""),
			want: `{"changes":[` +
				`{"old":"g","path":["gone"]},` +
				`{"new":"c","old":"b","path":["l",1]},` +
				`{"new":"d","path":["l",2]},` +
				`{"new":null,"path":["now_null"]},` +
				`{"new":"2","old":"1","path":["t","k"]},` +
				`{"new":"v","old":null,"path":["was_null"]}]}`,
		},
		{
			name:     "replace: unknown after apply and a container becoming null",
			resource: res("a.a", "delete,create", `"before":{"id":"7","m":{"a":1.50}},"after":{"id":null,"m":null},"after_unknown":{"id":true,"m":false}`, ""),
			want:     `{"changes":[{"new":null,"old":"7","path":["id"],"unknown":true},{"new":null,"old":{"a":1.50},"path":["m"]}]}`,
		},
		{
			name:     "update: sensitivity appears and disappears",
			resource: res("a.a", "update", `"before":{"p":"x","q":"y"},"after":{"p":"x","q":"y"},"before_sensitive":{"q":true},"after_sensitive":{"p":true}`, ""),
			want:     `{"changes":[{"path":["p"],"sensitivity":"added"},{"path":["q"],"sensitivity":"removed"}]}`,
		},
		{
			name:     "update: a whole value becoming sensitive",
			resource: res("a.a", "update", `"before":{"p":"x"},"after":{"p":"z"},"before_sensitive":false,"after_sensitive":true`, ""),
			// Sorted by canonical path bytes: `["p"]` before `[]`.
			want: `{"changes":[{"new":"z","old":"x","path":["p"]},{"path":[],"sensitivity":"added"}]}`,
		},
		{
			name:     "create: planned object with markers, numbers verbatim, strings escaped",
			resource: res("a.a", "create", `"before":null,"after":{"n":1e3,"s":"q\"\u0001\\é","l":[true,null]},"after_unknown":{"id":true,"l":[false,true]},"after_sensitive":{"s":true}`, ""),
			want:     `{"after":{"l":[true,null],"n":1e3,"s":"q\"\u0001\\é"},"sensitive":[["s"]],"unknown":[["id"],["l",1]]}`,
		},
		{
			name:     "create of an unknown whole value",
			resource: res("a.a", "create", `"after_unknown":true`, ""),
			want:     `{"after":null,"unknown":[[]]}`,
		},
		{
			name:     "delete: no values, only import, move and deposed key",
			resource: res("a.a", "delete", `"before":{"v":"1"},"importing":{"id":"i-1","identity":{"b":2,"a":1}}`, `"previous_address":"a.old","deposed":"0a1b"`),
			want:     `{"deposed":"0a1b","import":{"id":"i-1","identity":{"a":1,"b":2}},"moved_from":"a.old"}`,
		},
		{
			name:     "forget: nothing",
			resource: res("a.a", "forget", `"before":{"v":"1"}`, ""),
			want:     `{}`,
		},
		{
			name:     "update with nothing touched",
			resource: res("a.a", "update", `"before":{"v":"1"},"after":{"v":"1"}`, ""),
			want:     `{}`,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustParse(t, doc([]string{tc.resource}, nil))
			var buf bytes.Buffer
			canonical(&buf, resourceEffect(&p.resources[0]))
			if buf.String() != tc.want {
				t.Errorf("effect\n got %s\nwant %s", buf.String(), tc.want)
			}
		})
	}
}
