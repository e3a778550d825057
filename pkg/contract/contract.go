// Package contract is CAPTF's module contract v1alpha1: the roles a module
// plays, and validation of a role's inputs (the rendered
// terraform.tfvars.json) and outputs (its root outputs, normalised) against
// the contract's published JSON Schemas, embedded here verbatim.
//
// Validation errors name the offending path and the rule it breaks, never
// the offending value: inputs carry bootstrap data and outputs may carry
// secrets.
package contract

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Version is the contract version modules receive as captf_contract.
const Version = "v1alpha1"

// Role is the part a module plays in Cluster API.
type Role string

const (
	// RoleCluster is played by a TerraformCluster's module.
	RoleCluster Role = "cluster"
	// RoleMachine is played by a TerraformMachine's module.
	RoleMachine Role = "machine"
	// RoleMachinePool is played by a TerraformMachinePool's module.
	RoleMachinePool Role = "machinepool"
)

// Roles are every role, in a fixed order.
var Roles = []Role{RoleCluster, RoleMachine, RoleMachinePool}

// RoleForKind returns the role of a workload kind.
func RoleForKind(kind string) (Role, error) {
	switch kind {
	case "TerraformCluster":
		return RoleCluster, nil
	case "TerraformMachine":
		return RoleMachine, nil
	case "TerraformMachinePool":
		return RoleMachinePool, nil
	}
	return "", fmt.Errorf("kind %q plays no module role: want TerraformCluster, TerraformMachine or TerraformMachinePool", kind)
}

const schemaBase = "https://captf.io/schemas/v1alpha1/"

//go:embed schemas/*.json
var schemaFS embed.FS

var (
	compileOnce sync.Once
	compiled    map[string]*jsonschema.Schema
	compileErr  error
)

func schemas() (map[string]*jsonschema.Schema, error) {
	compileOnce.Do(func() {
		c := jsonschema.NewCompiler()
		entries, err := schemaFS.ReadDir("schemas")
		if err != nil {
			compileErr = err
			return
		}
		for _, e := range entries {
			data, err := schemaFS.ReadFile("schemas/" + e.Name())
			if err != nil {
				compileErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			if err != nil {
				compileErr = fmt.Errorf("schema %s: %w", e.Name(), err)
				return
			}
			if err := c.AddResource(schemaBase+e.Name(), doc); err != nil {
				compileErr = err
				return
			}
		}
		compiled = map[string]*jsonschema.Schema{}
		for _, r := range Roles {
			for _, side := range []string{"inputs", "outputs"} {
				name := string(r) + "-" + side + ".json"
				s, err := c.Compile(schemaBase + name)
				if err != nil {
					compileErr = fmt.Errorf("schema %s: %w", name, err)
					return
				}
				compiled[name] = s
			}
		}
	})
	return compiled, compileErr
}

// Violation is one broken rule: where, and what the rule wants.
type Violation struct {
	// Path is a JSON pointer into the validated document ("" is the root).
	Path string
	// Message says what the rule wants; it never quotes the value.
	Message string
}

// ValidationError lists every violation of a document.
type ValidationError struct {
	// Role and Side ("inputs" or "outputs") say what was validated.
	Role Role
	Side string
	// Violations are sorted by path.
	Violations []Violation
}

func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		path := v.Path
		if path == "" {
			path = "(document)"
		}
		parts = append(parts, path+": "+v.Message)
	}
	return fmt.Sprintf("%s %s break the v1alpha1 contract: %s", e.Role, e.Side, strings.Join(parts, "; "))
}

// ValidateInputs checks a rendered terraform.tfvars.json against the role's
// inputs schema.
func ValidateInputs(role Role, tfvars []byte) error {
	return validate(role, "inputs", tfvars)
}

// ValidateOutputs checks a role's normalised outputs, a JSON object of
// output name to value, against the role's outputs schema.
func ValidateOutputs(role Role, outputs []byte) error {
	return validate(role, "outputs", outputs)
}

func validate(role Role, side string, doc []byte) error {
	all, err := schemas()
	if err != nil {
		return fmt.Errorf("loading the contract schemas: %w", err)
	}
	s, ok := all[string(role)+"-"+side+".json"]
	if !ok {
		return fmt.Errorf("unknown role %q: want cluster, machine or machinepool", role)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("%s %s are not valid JSON", role, side)
	}
	err = s.Validate(v)
	var verr *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &verr) {
		return err
	}
	out := &ValidationError{Role: role, Side: side}
	collect(verr, &out.Violations)
	sort.SliceStable(out.Violations, func(i, j int) bool { return out.Violations[i].Path < out.Violations[j].Path })
	return out
}

// SchemaViolations validates the JSON document doc against the JSON Schema
// schema (any draft the library knows; draft 2020-12 when it names none),
// reporting every violation without the offending values. An error says
// that the schema or the document cannot be used.
func SchemaViolations(schema, doc []byte) ([]Violation, error) {
	sdoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	// Nothing is fetched: a $ref outside the schema fails to compile
	// (an image's schema never reads the manager's files or network).
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource("variables.json", sdoc); err != nil {
		return nil, err
	}
	s, err := c.Compile("variables.json")
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, errors.New("the document is not valid JSON")
	}
	var verr *jsonschema.ValidationError
	if err := s.Validate(v); err == nil {
		return nil, nil
	} else if !errors.As(err, &verr) {
		return nil, err
	}
	var out []Violation
	collect(verr, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

var printer = message.NewPrinter(language.English)

// collect walks to the leaf errors: the ones that name a concrete rule.
func collect(e *jsonschema.ValidationError, into *[]Violation) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, into)
		}
		return
	}
	*into = append(*into, Violation{Path: pointer(e.InstanceLocation), Message: describe(e.ErrorKind)})
}

// describe renders a rule without the offending value: the library's
// messages for the kinds below quote it (or its length, or a part of it),
// so they are written from the schema's side only.
func describe(k jsonschema.ErrorKind) string {
	num := func(r *big.Rat) string { f, _ := r.Float64(); return strconv.FormatFloat(f, 'g', -1, 64) }
	switch k := k.(type) {
	case *kind.Pattern:
		return "does not match the pattern the schema requires"
	case *kind.Format:
		return "is not a valid " + k.Want
	case *kind.AdditionalProperties:
		return "has properties the schema does not define: " + strings.Join(k.Properties, ", ")
	case *kind.Minimum:
		return "must be at least " + num(k.Want)
	case *kind.Maximum:
		return "must be at most " + num(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be greater than " + num(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be less than " + num(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + num(k.Want)
	case *kind.MinLength:
		return "minLength: must have at least " + strconv.Itoa(k.Want) + " characters"
	case *kind.MaxLength:
		return "maxLength: must have at most " + strconv.Itoa(k.Want) + " characters"
	case *kind.ContentEncoding:
		return "is not " + k.Want + " encoded"
	case *kind.ContentMediaType:
		return "is not of media type " + k.Want
	case *kind.PropertyNames:
		return "has a property name the schema refuses"
	case *kind.Type, *kind.Enum, *kind.Const, *kind.Required, *kind.MinProperties, *kind.MaxProperties,
		*kind.MinItems, *kind.MaxItems, *kind.UniqueItems, *kind.DependentRequired, *kind.Dependency, *kind.FalseSchema:
		return k.LocalizedString(printer) // the schema's side, or types and counts
	default:
		return "breaks the rule " + strings.Join(k.KeywordPath(), "/")
	}
}

func pointer(loc []string) string {
	if len(loc) == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range loc {
		b.WriteString("/")
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}
