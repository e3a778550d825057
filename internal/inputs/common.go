package inputs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
)

// ManagedBy is the value of the captf.io/managed-by tag.
const ManagedBy = "captf"

// The bootstrap formats a module may receive.
const (
	// FormatCloudConfig is the default bootstrap format.
	FormatCloudConfig = "cloud-config"
	// FormatIgnition is the Ignition bootstrap format.
	FormatIgnition = "ignition"
)

// The keys of a Cluster API bootstrap data Secret.
const (
	bootstrapValueKey  = "value"
	bootstrapFormatKey = "format"
)

// ObjectRef identifies the Terraform* object whose module runs.
type ObjectRef struct {
	// Kind is TerraformCluster, TerraformMachine or TerraformMachinePool.
	Kind      string
	Name      string
	Namespace string
}

// ClusterRef identifies the owning Cluster API Cluster.
type ClusterRef struct {
	Name      string
	Namespace string
}

// Common is what every role receives about who it is: the object, its
// Cluster and the template it was cloned from. Only names: no uid, labels,
// annotations or generation, so that the inputs hash stays stable.
type Common struct {
	Object  ObjectRef
	Cluster ClusterRef
	// Template is the object's cluster.x-k8s.io/cloned-from-name
	// annotation, "" when it has none.
	Template string
}

// NewCommon builds Common from the object being reconciled, its kind (typed
// objects read through a client often carry no TypeMeta) and the name of its
// Cluster, which lives in the same namespace.
func NewCommon(kind string, obj metav1.Object, clusterName string) Common {
	return Common{
		Object:   ObjectRef{Kind: kind, Name: obj.GetName(), Namespace: obj.GetNamespace()},
		Cluster:  ClusterRef{Name: clusterName, Namespace: obj.GetNamespace()},
		Template: obj.GetAnnotations()[infrav1.ClonedFromNameAnnotation],
	}
}

// check refuses a Common the contract cannot carry.
func (c Common) check(role contract.Role) error {
	kind, err := contract.RoleForKind(c.Object.Kind)
	if err != nil || kind != role {
		return fmt.Errorf("object kind %q does not play the %s role", c.Object.Kind, role)
	}
	switch {
	case c.Object.Name == "" || c.Object.Namespace == "":
		return errors.New("the object has no name or namespace")
	case c.Cluster.Name == "" || c.Cluster.Namespace == "":
		return errors.New("the owning Cluster has no name or namespace")
	}
	return nil
}

// values returns the keys every role receives.
func (c Common) values() map[string]any {
	return map[string]any{
		"captf_contract": contract.Version,
		"captf_cluster":  map[string]any{"name": c.Cluster.Name, "namespace": c.Cluster.Namespace},
		"captf_object":   map[string]any{"kind": c.Object.Kind, "name": c.Object.Name, "namespace": c.Object.Namespace},
		"captf_tags": map[string]string{
			"captf.io/cluster":    c.Cluster.Name,
			"captf.io/namespace":  c.Object.Namespace,
			"captf.io/kind":       c.Object.Kind,
			"captf.io/name":       c.Object.Name,
			"captf.io/managed-by": ManagedBy,
			"captf.io/template":   c.Template,
		},
	}
}

// Bootstrap is what a machine or pool read from its bootstrap data Secret.
type Bootstrap struct {
	// Value is the raw bytes of the Secret's value key (often gzip, not
	// UTF-8); it is always passed base64-encoded.
	Value []byte
	// Format is the Secret's format key; "" means cloud-config.
	Format string
}

// BootstrapFromSecret reads a bootstrap data Secret's data.
func BootstrapFromSecret(data map[string][]byte) Bootstrap {
	return Bootstrap{Value: data[bootstrapValueKey], Format: string(data[bootstrapFormatKey])}
}

// ErrBootstrapFormat is wrapped by the error about a bootstrap Secret whose
// format key is neither cloud-config nor ignition.
var ErrBootstrapFormat = errors.New("bootstrap data format is neither cloud-config nor ignition")

func (b Bootstrap) values(into map[string]any) error {
	format := b.Format
	if format == "" {
		format = FormatCloudConfig
	}
	if format != FormatCloudConfig && format != FormatIgnition {
		return fmt.Errorf("%w: %q", ErrBootstrapFormat, format)
	}
	into["bootstrap_data"] = base64.StdEncoding.EncodeToString(b.Value)
	into["bootstrap_format"] = format
	return nil
}

// ErrExportsInvalid is wrapped by the error about cluster exports that are
// not one JSON document.
var ErrExportsInvalid = errors.New("cluster exports are not valid JSON")

// exportsValue returns the cluster's exports as passed to machines and
// pools: verbatim, {} when absent or null.
func exportsValue(exports json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(exports)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(trimmed) {
		return nil, ErrExportsInvalid
	}
	return json.RawMessage(trimmed), nil
}

// nullable returns nil for the zero value, so that it renders as null.
func nullable[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

// nonNil returns an empty list instead of nil, so that it renders as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// encode writes a document deterministically: encoding/json sorts map keys,
// and <, > and & stay literal.
func encode(doc any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
