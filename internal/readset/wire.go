package readset

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unique"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// wireRecord is a Record as it is kept outside the process (a manager's
// checkpoint): the reads in their replay order, and the digest of what
// they returned. It names what a pass read, never what it returned.
type wireRecord struct {
	Reads  []wireRead `json:"r"`
	Digest string     `json:"d"`
}

type wireRead struct {
	// Kind is "group/version/Kind" ("/v1/Secret" for the core group).
	Kind      string `json:"k"`
	Namespace string `json:"n,omitempty"`
	Name      string `json:"m,omitempty"`
	Selector  string `json:"s,omitempty"`
	List      bool   `json:"l,omitempty"`
}

// MarshalJSON encodes the record for a checkpoint.
func (r *Record) MarshalJSON() ([]byte, error) {
	w := wireRecord{Reads: make([]wireRead, 0, len(r.reads)), Digest: base64.RawStdEncoding.EncodeToString(r.digest[:])}
	for _, k := range r.reads {
		gvk := k.gvk.Value()
		w.Reads = append(w.Reads, wireRead{Kind: gvk.Group + "/" + gvk.Version + "/" + gvk.Kind,
			Namespace: k.namespace.Value(), Name: k.name, Selector: k.selector, List: k.list})
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes a record MarshalJSON encoded. A record that does
// not decode whole is an error: a checkpoint never replays part of one.
func (r *Record) UnmarshalJSON(b []byte) error {
	var w wireRecord
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	digest, err := base64.RawStdEncoding.DecodeString(w.Digest)
	if err != nil || len(digest) != len(r.digest) {
		return fmt.Errorf("a record's digest %q is not a SHA-256", w.Digest)
	}
	if len(w.Reads) == 0 {
		return fmt.Errorf("a record with no read")
	}
	out := Record{reads: make([]key, 0, len(w.Reads))}
	copy(out.digest[:], digest)
	for _, rd := range w.Reads {
		parts := strings.Split(rd.Kind, "/")
		if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
			return fmt.Errorf("a record's read of kind %q: want group/version/Kind", rd.Kind)
		}
		gvk := schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]}
		out.reads = append(out.reads, key{gvk: unique.Make(gvk), namespace: unique.Make(rd.Namespace), name: rd.Name, selector: rd.Selector, list: rd.List})
	}
	*r = out
	return nil
}
