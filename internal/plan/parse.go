package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Plan is a parsed `show -json` plan document, reduced to what the summary,
// the fingerprint and the destructive check need. It holds the planned
// values in memory only; never log or print it.
type Plan struct {
	resources []resourceChange
	outputs   []outputChange
}

// kind is the class of a change's action list.
type kind int

const (
	kindNoOp kind = iota
	kindCreate
	kindRead
	kindUpdate
	kindReplace
	kindDelete
	kindForget
)

// label is the word a kind shows in a resource entry ("" for no-op).
func (k kind) label() string {
	return [...]string{"", "create", "read", "update", "replace", "delete", "forget"}[k]
}

// change is the part shared by resource and output changes. Values are the
// decoded JSON (map[string]any, []any, string, json.Number, bool, nil);
// numbers keep the literal the runtime wrote.
type change struct {
	actions         []string
	kind            kind
	before, after   any
	afterUnknown    any
	beforeSensitive any
	afterSensitive  any
}

type resourceChange struct {
	change
	address         string
	previousAddress string
	deposed         string
	importing       map[string]any // nil when the change imports nothing
}

func (r *resourceChange) imports() bool { return r.importing != nil }
func (r *resourceChange) moves() bool   { return r.previousAddress != "" }

type outputChange struct {
	change
	name string
}

// The wire shapes. Only the fields read are declared; the rest of the
// document (configuration, variables, prior state) is skipped.
type wireDocument struct {
	FormatVersion   string                `json:"format_version"`
	Errored         bool                  `json:"errored"`
	ResourceChanges []wireResourceChange  `json:"resource_changes"`
	OutputChanges   map[string]wireChange `json:"output_changes"`
}

type wireResourceChange struct {
	Address         string     `json:"address"`
	PreviousAddress string     `json:"previous_address"`
	Deposed         string     `json:"deposed"`
	Change          wireChange `json:"change"`
}

type wireChange struct {
	Actions         []string `json:"actions"`
	Before          any      `json:"before"`
	After           any      `json:"after"`
	AfterUnknown    any      `json:"after_unknown"`
	BeforeSensitive any      `json:"before_sensitive"`
	AfterSensitive  any      `json:"after_sensitive"`
	Importing       any      `json:"importing"`
}

// Parse decodes a `show -json` plan document. It fails closed: a document
// that is not a JSON object with a format_version, is marked errored, or
// has a change whose action list is unknown to this package is an error,
// so that an unreadable plan is never mistaken for an empty one.
func Parse(planJSON []byte) (*Plan, error) {
	if len(bytes.TrimSpace(planJSON)) == 0 {
		return nil, errors.New("plan JSON: empty document")
	}
	if bytes.TrimSpace(planJSON)[0] != '{' {
		return nil, errors.New("plan JSON: the document is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(planJSON))
	dec.UseNumber()
	var doc wireDocument
	if err := dec.Decode(&doc); err != nil {
		return nil, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("plan JSON: unexpected data after the document")
	}
	if doc.FormatVersion == "" {
		return nil, errors.New("plan JSON: format_version is missing; not a plan document")
	}
	if doc.Errored {
		return nil, errors.New("plan JSON: the runtime marked the plan as errored")
	}
	p := &Plan{}
	for i, w := range doc.ResourceChanges {
		rc, err := resourceFromWire(w)
		if err != nil {
			return nil, fmt.Errorf("plan JSON: resource_changes[%d]: %w", i, err)
		}
		p.resources = append(p.resources, rc)
	}
	names := make([]string, 0, len(doc.OutputChanges))
	for name := range doc.OutputChanges {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "" || strings.ContainsAny(name, "\r\n") {
			return nil, errors.New("plan JSON: output_changes has an empty or multi-line output name")
		}
		c, err := changeFromWire(doc.OutputChanges[name])
		if err != nil {
			// Output names are configuration identifiers, not values.
			return nil, fmt.Errorf("plan JSON: output_changes[%q]: %w", name, err)
		}
		if c.kind != kindNoOp && c.kind != kindCreate && c.kind != kindUpdate && c.kind != kindDelete {
			return nil, fmt.Errorf("plan JSON: output_changes[%q]: unsupported actions %v", name, c.actions)
		}
		p.outputs = append(p.outputs, outputChange{change: c, name: name})
	}
	return p, nil
}

func resourceFromWire(w wireResourceChange) (resourceChange, error) {
	// A line break in a name would make fingerprint lines ambiguous.
	if w.Address == "" || strings.ContainsAny(w.Address, "\r\n") {
		return resourceChange{}, errors.New("address is empty or spans lines")
	}
	if strings.ContainsAny(w.PreviousAddress, "\r\n") {
		return resourceChange{}, errors.New("previous_address spans lines")
	}
	c, err := changeFromWire(w.Change)
	if err != nil {
		return resourceChange{}, err
	}
	rc := resourceChange{
		change:          c,
		address:         w.Address,
		previousAddress: w.PreviousAddress,
		deposed:         w.Deposed,
	}
	if rc.previousAddress == rc.address {
		rc.previousAddress = ""
	}
	switch imp := w.Change.Importing.(type) {
	case nil:
	case map[string]any:
		rc.importing = imp
	default:
		return resourceChange{}, errors.New("change.importing is not an object")
	}
	return rc, nil
}

func changeFromWire(w wireChange) (change, error) {
	k, err := classify(w.Actions)
	if err != nil {
		return change{}, err
	}
	return change{
		actions:         w.Actions,
		kind:            k,
		before:          w.Before,
		after:           w.After,
		afterUnknown:    w.AfterUnknown,
		beforeSensitive: w.BeforeSensitive,
		afterSensitive:  w.AfterSensitive,
	}, nil
}

// classify maps an action list onto its kind. Every list a runtime writes
// today is known; anything else is rejected rather than guessed, because a
// guarded apply must not treat an unknown action as harmless.
// ["forget","create"] (OpenTofu replacing an object whose destroy is
// disabled) is a replacement that deletes nothing.
func classify(actions []string) (kind, error) {
	switch strings.Join(actions, ",") {
	case "no-op":
		return kindNoOp, nil
	case "create":
		return kindCreate, nil
	case "read":
		return kindRead, nil
	case "update":
		return kindUpdate, nil
	case "delete":
		return kindDelete, nil
	case "forget":
		return kindForget, nil
	case "delete,create", "create,delete", "forget,create":
		return kindReplace, nil
	}
	for _, a := range actions {
		switch a {
		case "no-op", "create", "read", "update", "delete", "forget":
		default:
			// Never echo the unknown word: it is outside input.
			return 0, errors.New("change.actions has an unknown action")
		}
	}
	if len(actions) == 0 {
		return 0, errors.New("change.actions is empty")
	}
	return 0, fmt.Errorf("change.actions %v is not a supported combination", actions)
}

// decodeError rewrites a decoder error so that it never quotes the input:
// encoding/json's messages can carry a character or a number literal.
func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("plan JSON: unexpected end of input")
	case errors.As(err, &syntax):
		return fmt.Errorf("plan JSON: syntax error at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		// Field is a path of this package's json tags, never a value.
		return fmt.Errorf("plan JSON: %s has the wrong type (byte %d)", typ.Field, typ.Offset)
	default:
		return errors.New("plan JSON: the document cannot be decoded")
	}
}
