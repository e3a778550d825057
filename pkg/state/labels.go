package state

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// Labels, annotation and data key the kubernetes backend itself puts on every
// state Secret. OpenTofu keeps Terraform's values, so they are the same for
// both runtimes.
const (
	// LabelState ("true") marks a backend state Secret.
	LabelState = "tfstate"
	// LabelSecretSuffix carries the object's state suffix.
	LabelSecretSuffix = "tfstateSecretSuffix"
	// LabelWorkspace carries the workspace, always Workspace.
	LabelWorkspace = "tfstateWorkspace"
	// LabelManagedBy is set to ManagedByTerraform by both runtimes.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByTerraform is the value of LabelManagedBy.
	ManagedByTerraform = "terraform"
	// DataKey holds the gzipped state (or one piece of it) in each Secret.
	DataKey = "tfstate"
	// AnnotationEncoding is set to EncodingGzip on every state Secret.
	AnnotationEncoding = "encoding"
	// EncodingGzip is the value of AnnotationEncoding.
	EncodingGzip = "gzip"
)

// The label map CAPTF passes to the backend (see OwnerLabels). The same keys
// are declared in CAPTF's API package; they are repeated here so that this
// public package stays free of the API types.
const (
	// LabelOwnerKind is the Kind of the object the state belongs to.
	LabelOwnerKind = "captf.infrastructure.cluster.x-k8s.io/owner-kind"
	// LabelOwnerName is the object's name, hashed when too long for a label.
	LabelOwnerName = "captf.infrastructure.cluster.x-k8s.io/owner-name"
	// LabelClusterName is the Cluster API cluster name, hashed likewise.
	LabelClusterName = "cluster.x-k8s.io/cluster-name"
	// LabelManaged ("true") lets the manager cache the Secret's metadata.
	LabelManaged = "captf.io/managed"
	// LabelMove ("") makes clusterctl move carry the Secret along.
	LabelMove = "clusterctl.cluster.x-k8s.io/move"
)

// Selector selects the state Secrets of one suffix, the way the backend
// itself finds them.
func Selector(suffix string) labels.Selector {
	return labels.SelectorFromSet(PieceLabels(suffix))
}

// PieceLabels are the labels the backend gives every piece of the state of
// one suffix (Selector selects them).
func PieceLabels(suffix string) map[string]string {
	return map[string]string{LabelState: "true", LabelSecretSuffix: suffix, LabelWorkspace: Workspace}
}

// OwnerLabels is the label map CAPTF passes to the backend for an object, so
// that every chunk and the lock Lease carry it. Names longer than a label
// value allows are replaced by the first 16 hex characters of their SHA-256.
// clusterName is the owning Cluster API cluster. The result must be the same
// for the whole life of the object: the backend selects chunks by it.
func OwnerLabels(kind, name, clusterName string) map[string]string {
	return map[string]string{
		LabelOwnerKind:   kind,
		LabelOwnerName:   labelValue(name),
		LabelClusterName: labelValue(clusterName),
		LabelManaged:     "true",
		LabelMove:        "",
	}
}

// OwnerSelector selects what CAPTF labelled for an object of kind and
// name (OwnerLabels): its Jobs and their pods, its leases.
func OwnerSelector(kind, name string) map[string]string {
	return map[string]string{LabelOwnerKind: kind, LabelOwnerName: labelValue(name)}
}

// maxLabelValue is the longest value a Kubernetes label may carry.
const maxLabelValue = 63

func labelValue(v string) string {
	if len(v) <= maxLabelValue {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:8])
}

// HCLMap renders labels as an HCL object literal for
// -backend-config=labels=<map>. Keys are sorted so the same map always gives
// the same argument; keys and values are quoted and escaped, including "${"
// and "%{", which HCL would otherwise read as template sequences.
func HCLMap(m map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(',')
		}
		writeHCLString(&b, k)
		b.WriteByte('=')
		writeHCLString(&b, m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// HCLString returns s as an HCL quoted string literal: quotes,
// backslashes and control characters escaped, and template sequences ("${",
// "%{") doubled so that the value is never interpolated.
func HCLString(s string) string {
	var b strings.Builder
	writeHCLString(&b, s)
	return b.String()
}

func writeHCLString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\u%04x`, r)
		case (r == '$' || r == '%') && strings.HasPrefix(s[i+1:], "{"):
			// Doubling the sigil is HCL's escape for a literal "${" or "%{".
			b.WriteRune(r)
			b.WriteRune(r)
		default:
			// Invalid UTF-8 arrives here as U+FFFD and is written as such.
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
