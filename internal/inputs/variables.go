package inputs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// SourceKind is the kind of a variablesFrom source.
type SourceKind string

const (
	// SourceConfigMap is a ConfigMap source; its variables are not sensitive.
	SourceConfigMap SourceKind = "ConfigMap"
	// SourceSecret is a Secret source; its variables are sensitive.
	SourceSecret SourceKind = "Secret"
)

// Source is what the caller read for one spec.variablesFrom entry.
type Source struct {
	Kind SourceKind
	Name string
	// Found is false when the object does not exist.
	Found bool
	// Labelled is true when it carries captf.io/variables=true; an
	// unlabelled object counts as missing.
	Labelled bool
	// Optional lets a missing source contribute nothing.
	Optional bool
	// Format is String (also when "") or JSON.
	Format infrav1.VariablesFormat
	// Data is one variable per key: a Secret's data, or a ConfigMap's data
	// and binaryData together.
	Data map[string][]byte
}

// SourceFromConfigMap describes a variablesFrom entry and the ConfigMap it
// names; cm is nil when it was not found.
func SourceFromConfigMap(ref infrav1.VariablesFromSource, cm *corev1.ConfigMap) Source {
	s := newSource(SourceConfigMap, ref)
	if ref.ConfigMapRef != nil {
		s.Name = ref.ConfigMapRef.Name
	}
	if cm != nil {
		s.Found = true
		s.Labelled = cm.Labels[infrav1.VariablesLabel] == "true"
		s.Data = make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
		for k, v := range cm.Data {
			s.Data[k] = []byte(v)
		}
		for k, v := range cm.BinaryData {
			s.Data[k] = v
		}
	}
	return s
}

// SourceFromSecret describes a variablesFrom entry and the Secret it names;
// secret is nil when it was not found.
func SourceFromSecret(ref infrav1.VariablesFromSource, secret *corev1.Secret) Source {
	s := newSource(SourceSecret, ref)
	if ref.SecretRef != nil {
		s.Name = ref.SecretRef.Name
	}
	if secret != nil {
		s.Found = true
		s.Labelled = secret.Labels[infrav1.VariablesLabel] == "true"
		s.Data = secret.Data
	}
	return s
}

func newSource(kind SourceKind, ref infrav1.VariablesFromSource) Source {
	return Source{Kind: kind, Optional: ref.Optional != nil && *ref.Optional, Format: ref.Format}
}

// SourceNotFoundError reports a required variablesFrom source that is
// missing or not labelled captf.io/variables=true. The caller reports it as
// VariablesSourceNotFound.
type SourceNotFoundError struct {
	Kind       SourceKind
	Name       string
	Unlabelled bool
}

func (e *SourceNotFoundError) Error() string {
	if e.Unlabelled {
		return fmt.Sprintf("variables source %s %q is not labelled %s=true; label it or mark the source optional", e.Kind, e.Name, infrav1.VariablesLabel)
	}
	return fmt.Sprintf("variables source %s %q was not found; create it or mark the source optional", e.Kind, e.Name)
}

// InvalidVariableError reports a variable that cannot be passed to the
// module. It names where the variable came from and its key, never its
// value. The caller reports it as VariablesInvalid.
type InvalidVariableError struct {
	// Source is "spec.variables" or "<Kind> <name>".
	Source string
	Key    string
	// Reason says what is wrong, without the value.
	Reason string
}

func (e *InvalidVariableError) Error() string {
	if e.Key == "" {
		return e.Source + " " + e.Reason
	}
	return fmt.Sprintf("variable %q from %s %s", e.Key, e.Source, e.Reason)
}

// inlineSource names spec.variables in errors.
const inlineSource = "spec.variables"

var variableName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]*$`)

// metaArguments are the module block's own arguments: no variable may take
// their names.
var metaArguments = map[string]bool{
	"source": true, "version": true, "providers": true, "count": true,
	"for_each": true, "depends_on": true, "lifecycle": true, "locals": true,
}

// NameRule is a rule of user variable names that holds for every role
// (each role's contract inputs are reserved too: contract.InputNames).
// The admission webhook and the inputs renderer apply the same rules.
type NameRule int

const (
	// NameValid: the name breaks no rule.
	NameValid NameRule = iota
	// NameMalformed: not letters, digits, _ and -, starting with a letter or _.
	NameMalformed
	// NameReservedPrefix: starts with captf_, the contract's prefix.
	NameReservedPrefix
	// NameMetaArgument: a module block's own argument (source, count, …).
	NameMetaArgument
)

// CheckVariableName returns the first rule key breaks, NameValid if none.
func CheckVariableName(key string) NameRule {
	switch {
	case !variableName.MatchString(key):
		return NameMalformed
	case strings.HasPrefix(key, "captf_"):
		return NameReservedPrefix
	case metaArguments[key]:
		return NameMetaArgument
	}
	return NameValid
}

// checkName applies the rules of variable names that hold for every role;
// Files adds the role's own contract inputs.
func checkName(source, key string) error {
	reason := ""
	switch CheckVariableName(key) {
	case NameMalformed:
		reason = "is not a valid variable name: use letters, digits, _ and -, not starting with a digit or -"
	case NameReservedPrefix:
		reason = "uses the reserved prefix captf_"
	case NameMetaArgument:
		reason = "is a module meta-argument"
	default:
		return nil
	}
	return &InvalidVariableError{Source: source, Key: key, Reason: reason}
}

// MergeVariables merges a workload object's user variables: the sources in
// list order (a later source wins per key), then the inline variables,
// which win over all. It returns each variable's JSON value and the names
// whose winning value came from a Secret (only true entries). A String
// source passes each value as a JSON string; a JSON source parses it.
//
// Errors are *SourceNotFoundError for a required source that is missing or
// unlabelled, and *InvalidVariableError for a value or name that cannot be
// passed on; neither carries a value.
func MergeVariables(inline *apiextensionsv1.JSON, sources []Source) (map[string]json.RawMessage, map[string]bool, error) {
	values := map[string]json.RawMessage{}
	sensitive := map[string]bool{}
	for _, src := range sources {
		if !src.Found || !src.Labelled {
			if src.Optional {
				continue
			}
			return nil, nil, &SourceNotFoundError{Kind: src.Kind, Name: src.Name, Unlabelled: src.Found}
		}
		where := string(src.Kind) + " " + src.Name
		for _, key := range sortedKeys(src.Data) {
			v, err := sourceValue(where, key, src.Format, src.Data[key])
			if err != nil {
				return nil, nil, err
			}
			values[key] = v
			if src.Kind == SourceSecret {
				sensitive[key] = true
			} else {
				delete(sensitive, key)
			}
		}
	}
	if inline != nil && len(bytes.TrimSpace(inline.Raw)) > 0 {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(inline.Raw, &doc); err != nil || doc == nil {
			return nil, nil, &InvalidVariableError{Source: inlineSource, Key: "", Reason: "is not a JSON object"}
		}
		for _, key := range sortedKeys(doc) {
			if err := checkName(inlineSource, key); err != nil {
				return nil, nil, err
			}
			values[key] = compact(doc[key])
			delete(sensitive, key)
		}
	}
	return values, sensitive, nil
}

func sourceValue(where, key string, format infrav1.VariablesFormat, raw []byte) (json.RawMessage, error) {
	if err := checkName(where, key); err != nil {
		return nil, err
	}
	if !utf8.Valid(raw) {
		return nil, &InvalidVariableError{Source: where, Key: key, Reason: "is not UTF-8"}
	}
	switch format {
	case "", infrav1.VariablesFormatString:
		// Marshalling a string cannot fail.
		b, _ := json.Marshal(string(raw))
		return b, nil
	case infrav1.VariablesFormatJSON:
		if !json.Valid(raw) {
			return nil, &InvalidVariableError{Source: where, Key: key, Reason: "is not valid JSON (format JSON)"}
		}
		return compact(raw), nil
	}
	return nil, &InvalidVariableError{Source: where, Key: key, Reason: fmt.Sprintf("has unknown format %q: want String or JSON", format)}
}

func compact(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return json.RawMessage(raw)
	}
	return buf.Bytes()
}

// UserVariables lists merged variables for Root, sorted by name.
func UserVariables(values map[string]json.RawMessage, sensitive map[string]bool) []UserVariable {
	out := make([]UserVariable, 0, len(values))
	for _, name := range sortedKeys(values) {
		out = append(out, UserVariable{Name: name, Sensitive: sensitive[name]})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
