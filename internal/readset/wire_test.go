package readset

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestACheckpointedRecordDecodesWholeOrNotAtAll: a record read back from a
// checkpoint that was cut, edited or written by something else is refused
// with an error naming what is wrong, never replayed in part.
func TestACheckpointedRecordDecodesWholeOrNotAtAll(t *testing.T) {
	const digest = `"d":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"`
	for _, tc := range []struct {
		name, doc, wantErr string
	}{
		{name: "whole", doc: `{"r":[{"k":"/v1/Secret","n":"ns","m":"s"},{"k":"cluster.x-k8s.io/v1beta2/Machine","n":"ns","s":"a=b","l":true}],` + digest + `}`},
		{name: "no read", doc: `{"r":[],` + digest + `}`, wantErr: "no read"},
		{name: "a digest cut short", doc: `{"r":[{"k":"/v1/Secret","m":"s"}],"d":"47DEQpj8"}`, wantErr: "not a SHA-256"},
		{name: "a kind without its version", doc: `{"r":[{"k":"Secret","m":"s"}],` + digest + `}`, wantErr: "group/version/Kind"},
		{name: "not JSON", doc: `{"r":[`, wantErr: "unexpected end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Record
			err := json.Unmarshal([]byte(tc.doc), &r)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				again, err := json.Marshal(&r)
				if err != nil || string(again) != tc.doc {
					t.Errorf("encoded again: %s (%v), want %s", again, err, tc.doc)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one saying %q", err, tc.wantErr)
			}
			if len(r.reads) != 0 {
				t.Errorf("a refused record kept %d reads", len(r.reads))
			}
		})
	}
}

// FuzzRecordJSON: whatever a checkpoint holds, decoding it never panics,
// and a record it accepts encodes to what decodes to the same record.
func FuzzRecordJSON(f *testing.F) {
	f.Add([]byte(`{"r":[{"k":"/v1/Secret","n":"ns","m":"s"}],"d":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"}`))
	f.Add([]byte(`{"r":[{"k":"a/b/c","l":true,"s":"x=y"}],"d":""}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var r Record
		if json.Unmarshal(doc, &r) != nil {
			return
		}
		again, err := json.Marshal(&r)
		if err != nil {
			t.Fatalf("a decoded record does not encode: %v", err)
		}
		var back Record
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("%s does not decode again: %v", again, err)
		}
		if back.digest != r.digest || len(back.reads) != len(r.reads) {
			t.Fatalf("%s decoded to another record", again)
		}
		for i := range r.reads {
			if back.reads[i] != r.reads[i] {
				t.Fatalf("read %d: %+v, then %+v", i, r.reads[i], back.reads[i])
			}
		}
	})
}
