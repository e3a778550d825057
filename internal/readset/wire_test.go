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
