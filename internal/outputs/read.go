package outputs

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// reading is a role's contract outputs after normalisation and schema
// validation.
type reading struct {
	// values are the normalised contract outputs by name.
	values map[string]json.RawMessage
	// invalid names the outputs something was found wrong with.
	invalid map[string]bool
	report  Report
}

// known reports whether an output has a value that passed validation.
func (r *reading) known(name string) bool {
	v, ok := r.values[name]
	return ok && !isNull(v) && !r.invalid[name]
}

// fail records an invalid output.
func (r *reading) fail(output, message string) {
	r.invalid[output] = true
	r.report.add(infrav1.OutputsInvalidReason, output, message)
}

// decode unmarshals a validated output; a failure means the schema and
// this package disagree on its shape.
func (r *reading) decode(name string, into any) bool {
	if err := json.Unmarshal(r.values[name], into); err != nil {
		r.fail(name, name+" does not have the contract's shape")
		return false
	}
	return true
}

// health is the health reading when the health output is known and valid.
func (r *reading) health() *Health {
	var h healthJSON
	if !r.known("health") || json.Unmarshal(r.values["health"], &h) != nil {
		return nil
	}
	return h.health()
}

// values picks the values of the role's contract outputs from state; other
// outputs are never read.
func values(role contract.Role, outs map[string]state.Output) map[string]json.RawMessage {
	names, _ := contract.OutputNames(role)
	raw := map[string]json.RawMessage{}
	for _, name := range names {
		if o, ok := outs[name]; ok && len(o.Value) > 0 {
			raw[name] = o.Value
		}
	}
	return raw
}

// read normalises and validates a role's contract outputs. pendingIfNull
// names the outputs the role may report null but whose null means "not
// known yet"; a null output the schema does not allow null is pending too
// (the runtimes never store a null root output, but a state could hold
// one).
func read(role contract.Role, raw map[string]json.RawMessage, pendingIfNull ...string) reading {
	r := reading{values: map[string]json.RawMessage{}, invalid: map[string]bool{}}
	names, err := contract.OutputNames(role)
	if err != nil {
		r.fail("", "the contract's output names could not be read: "+err.Error())
		return r
	}
	nullable, err := contract.NullableOutputs(role)
	if err != nil {
		r.fail("", "the contract's output types could not be read: "+err.Error())
		return r
	}
	for _, name := range names {
		v, ok := raw[name]
		if !ok {
			continue
		}
		if !json.Valid(v) {
			r.fail(name, name+" is not valid JSON")
			continue
		}
		r.values[name] = defaultOptionals(name, v)
	}
	if r.values, err = contract.NormalizeOutputs(role, r.values); err != nil {
		r.fail("", "the outputs could not be normalised: "+err.Error())
		return r
	}
	doc := maps.Clone(r.values)
	covered := false // a problem already says an output is absent from doc
	for _, name := range names {
		v, ok := r.values[name]
		switch {
		case r.invalid[name]:
			covered = true
		case !ok:
			covered = true
			r.report.add(infrav1.OutputsMissingReason, name, name+" is missing from the state: the module must declare it with a non-null value (a null root output is not stored)")
		case isNull(v) && !nullable[name]:
			covered = true
			delete(doc, name)
			r.report.add(infrav1.OutputsPendingReason, name, name+" is null: not known yet")
		case isNull(v) && slices.Contains(pendingIfNull, name):
			r.report.add(infrav1.OutputsPendingReason, name, name+" is null: not known yet")
		}
	}
	r.validate(role, doc, covered)
	return r
}

// validate checks doc against the role's outputs schema and records each
// violation as a problem of the output it is in. Violations of the document
// itself are required outputs that are absent: when covered, a problem
// already says so.
func (r *reading) validate(role contract.Role, doc map[string]json.RawMessage, covered bool) {
	body, err := json.Marshal(doc)
	if err == nil {
		err = contract.ValidateOutputs(role, body)
	}
	var verr *contract.ValidationError
	if err == nil {
		return
	}
	if !errors.As(err, &verr) {
		r.fail("", "the outputs could not be validated: "+err.Error())
		return
	}
	for _, v := range violations(verr.Violations) {
		if v.Path == "" {
			if !covered {
				r.fail("", "outputs: "+v.Message)
			}
			continue
		}
		segs := strings.Split(strings.TrimPrefix(v.Path, "/"), "/")
		r.fail(segs[0], place(segs)+": "+v.Message)
	}
}

// violations drops the noise of an anyOf with a null alternative ("got
// object, want null" next to the real complaint at the same place or
// inside it), repeats, and the offending value some rules quote.
func violations(in []contract.Violation) []contract.Violation {
	noise := func(v contract.Violation) bool {
		if !strings.HasSuffix(v.Message, ", want null") {
			return false
		}
		return slices.ContainsFunc(in, func(o contract.Violation) bool {
			return !strings.HasSuffix(o.Message, ", want null") && (o.Path == v.Path || strings.HasPrefix(o.Path, v.Path+"/"))
		})
	}
	var out []contract.Violation
	seen := map[contract.Violation]bool{}
	for _, v := range in {
		if noise(v) {
			continue
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// contractWords are the names a path into the outputs may show: contract
// output and attribute names. Any other object key (a key of a failure
// domain's attributes) is content and shows as "*".
var contractWords = map[string]bool{
	"control_plane_endpoint": true, "host": true, "port": true,
	"failure_domains": true, "name": true, "control_plane": true, "attributes": true,
	"exports": true, "health": true, "state": true, "healthy": true, "message": true, "reasons": true,
	"provider_id": true, "addresses": true, "type": true, "address": true,
	"failure_domain": true, "interruptible": true,
	"provider_id_list": true, "replicas": true, "instances": true, "instance_id": true,
}

// place renders a JSON pointer's segments as "failure_domains/0/name".
func place(segs []string) string {
	shown := make([]string, len(segs))
	for i, s := range segs {
		if contractWords[s] || isIndex(s) {
			shown[i] = s
		} else {
			shown[i] = "*"
		}
	}
	return strings.Join(shown, "/")
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isNull(v json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}
