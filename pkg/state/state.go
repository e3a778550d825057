package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// State is what CAPTF uses of a decoded state. Printing it with fmt, slog or
// a logr logger shows a summary; output values never appear.
type State struct {
	// Serial is the state's serial; it grows with every write.
	Serial int64
	// Lineage is the state's lineage, fixed when the state was created.
	Lineage string
	// TerraformVersion is the version of the runtime (Terraform or
	// OpenTofu) that last wrote the state.
	TerraformVersion string
	// Outputs are the root module outputs by name, sensitive ones included.
	Outputs map[string]Output
	// ManagedResources counts resource blocks of mode "managed"; a block
	// with count or for_each counts once, data sources not at all.
	ManagedResources int
	// CompressedBytes is the size of the gzipped state summed over all its
	// Secrets, a surplus chunk included.
	CompressedBytes int64
	// Secrets are the state Secrets in chunk order.
	Secrets []SecretRef
	// Fingerprint is Fingerprint of the Secrets the state was read from.
	Fingerprint string
}

// SecretRef identifies one state Secret at the version that was read.
type SecretRef struct {
	Name            string
	ResourceVersion string
}

// Output is one root module output. Its String method, every fmt verb, and
// its JSON form (which structured loggers use) show only its type and
// whether it is sensitive: CAPTF never lets an output value reach a log, an
// event or a condition. Code that needs the value reads Value.
type Output struct {
	// Value is the output's JSON value exactly as in the state.
	Value json.RawMessage
	// Type is the output's type as the runtime recorded it, e.g. "string"
	// or ["object",{...}].
	Type json.RawMessage
	// Sensitive is true for outputs declared sensitive.
	Sensitive bool
}

// maxTypeShown bounds how much of a (possibly huge object) type String shows.
const maxTypeShown = 80

func (o Output) String() string {
	t := strings.Join(strings.Fields(string(o.Type)), "")
	switch {
	case t == "":
		t = "untyped"
	case len(t) > maxTypeShown:
		t = t[:maxTypeShown] + "..."
	}
	if o.Sensitive {
		return t + " (sensitive)"
	}
	return t + " (value hidden)"
}

// Format makes every verb, %#v and %d included, print String.
func (o Output) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, o.String()) }

// LogValue keeps the value out of slog output.
func (o Output) LogValue() slog.Value { return slog.StringValue(o.String()) }

// MarshalLog keeps the value out of logr output (logr.Marshaler).
func (o Output) MarshalLog() any { return o.String() }

// MarshalJSON leaves the value out, for loggers that encode with JSON.
func (o Output) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type      json.RawMessage `json:"type,omitempty"`
		Sensitive bool            `json:"sensitive"`
	}{o.Type, o.Sensitive})
}

func (s State) String() string {
	return fmt.Sprintf("state serial %d, lineage %s, runtime %s, %d outputs, %d managed resources, %d bytes compressed in %d Secrets",
		s.Serial, s.Lineage, s.TerraformVersion, len(s.Outputs), s.ManagedResources, s.CompressedBytes, len(s.Secrets))
}

// Format makes every verb print String, so outputs never show.
func (s State) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// LogValue keeps outputs out of slog output.
func (s State) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalLog keeps outputs out of logr output (logr.Marshaler).
func (s State) MarshalLog() any { return s.String() }

// Fingerprint summarises the names and resourceVersions of a state's
// Secrets. It needs metadata only, so it works on the manager's metadata
// cache (metav1.PartialObjectMetadata) as well as on full Secrets.
//
// Reading costs nothing when nothing changed: Decode is a function of the
// Secrets' names and data alone, and the API server changes a Secret's
// resourceVersion whenever its data changes. So when the Fingerprint of the
// Secrets now equals State.Fingerprint (or Error.Fingerprint) of the last
// read, a new read would return the same result and can be skipped. A cache
// that lags only causes an extra read, never a missed change.
func Fingerprint[O any, PO interface {
	*O
	metav1.Object
}](objs []O) string {
	refs := make([]SecretRef, 0, len(objs))
	for i := range objs {
		var o PO = &objs[i]
		refs = append(refs, SecretRef{Name: o.GetName(), ResourceVersion: o.GetResourceVersion()})
	}
	return fingerprint(refs)
}

func fingerprint(refs []SecretRef) string {
	refs = slices.Clone(refs)
	slices.SortFunc(refs, func(a, b SecretRef) int { return strings.Compare(a.Name, b.Name) })
	h := sha256.New()
	for _, r := range refs {
		// NUL cannot occur in names or resourceVersions, so no two lists
		// hash the same input.
		_, _ = io.WriteString(h, r.Name+"\x00"+r.ResourceVersion+"\x00")
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
