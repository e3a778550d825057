package plan

import (
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

const (
	// MaxResources is the most entries Summary.Resources carries.
	MaxResources = 50
	// MaxResourceEntryLen is the longest a Summary.Resources entry gets,
	// in bytes (so also in characters).
	MaxResourceEntryLen = 600
	// MaxDriftResources is the most addresses Drift.Resources carries.
	MaxDriftResources = 20
)

// Summary is what a plan changes, in the shape of a runner result's `plan`
// and a TerraformPlan's spec.summary. It never carries values.
type Summary struct {
	// Create, Update, Replace and Delete count resource changes by action; a
	// replacement (delete then create, or create then delete) counts once,
	// in Replace. Reads of data sources are in none of them.
	Create  int `json:"create"`
	Update  int `json:"update"`
	Replace int `json:"replace"`
	Delete  int `json:"delete"`
	// Import, Move and Forget count those changes on their own, whatever the
	// resource's action is; they are never in the four counts above.
	Import int `json:"import"`
	Move   int `json:"move"`
	Forget int `json:"forget"`
	// OutputChanges counts root outputs whose action is not no-op.
	OutputChanges int `json:"outputChanges"`
	// Resources lists "<address> (<labels>)" for every resource change that
	// is not a plain no-op, sorted by address, at most MaxResources entries
	// of at most MaxResourceEntryLen bytes each.
	Resources []string `json:"resources,omitempty"`
	// Truncated reports that Resources was cut at MaxResources entries.
	Truncated bool `json:"truncated,omitempty"`
}

// Empty reports a plan with no resource, output, import or move change; the
// fingerprint of such a plan is EmptyPlanHash.
func (s Summary) Empty() bool {
	return s.Create == 0 && s.Update == 0 && s.Replace == 0 && s.Delete == 0 &&
		s.Import == 0 && s.Move == 0 && s.Forget == 0 && s.OutputChanges == 0 &&
		len(s.Resources) == 0
}

// Drift is what a drift run found: the changes that would bring the
// infrastructure back to the configuration. Imports, moves and output
// changes are not drift.
type Drift struct {
	// Detected reports that at least one count is not zero.
	Detected bool `json:"detected"`
	Create   int  `json:"create"`
	Update   int  `json:"update"`
	Replace  int  `json:"replace"`
	Delete   int  `json:"delete"`
	// Resources lists the drifted addresses, sorted, at most
	// MaxDriftResources of them.
	Resources []string `json:"resources,omitempty"`
}

// Summarize parses a `show -json` plan document and returns its Summary.
func Summarize(planJSON []byte) (Summary, error) {
	p, err := Parse(planJSON)
	if err != nil {
		return Summary{}, err
	}
	return p.Summary(), nil
}

// Summary counts and lists the plan's changes (module-author guide §8.1).
func (p *Plan) Summary() Summary {
	var s Summary
	type listed struct{ address, entry string }
	var entries []listed
	for i := range p.resources {
		r := &p.resources[i]
		switch r.kind {
		case kindCreate:
			s.Create++
		case kindUpdate:
			s.Update++
		case kindReplace:
			s.Replace++
		case kindDelete:
			s.Delete++
		case kindForget:
			s.Forget++
		}
		if r.imports() {
			s.Import++
		}
		if r.moves() {
			s.Move++
		}
		if r.kind == kindNoOp && !r.imports() && !r.moves() {
			continue
		}
		entries = append(entries, listed{r.address, resourceEntry(r)})
	}
	for _, o := range p.outputs {
		if o.kind != kindNoOp {
			s.OutputChanges++
		}
	}
	// Entries of one address (a current and a deposed object) keep a
	// stable order through the entry text.
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].address != entries[j].address {
			return entries[i].address < entries[j].address
		}
		return entries[i].entry < entries[j].entry
	})
	if len(entries) > MaxResources {
		entries = entries[:MaxResources]
		s.Truncated = true
	}
	for _, e := range entries {
		s.Resources = append(s.Resources, e.entry)
	}
	return s
}

// resourceEntry renders "<address> (<labels>)": the action, then import,
// then move. An address too long for MaxResourceEntryLen is cut (on a
// character boundary) and ends in "..."; the labels are always kept.
func resourceEntry(r *resourceChange) string {
	var labels []string
	if l := r.kind.label(); l != "" {
		labels = append(labels, l)
	}
	if r.imports() {
		labels = append(labels, "import")
	}
	if r.moves() {
		labels = append(labels, "move")
	}
	suffix := " (" + strings.Join(labels, ", ") + ")"
	address := r.address
	if len(address)+len(suffix) > MaxResourceEntryLen {
		const ellipsis = "..."
		cut := MaxResourceEntryLen - len(suffix) - len(ellipsis)
		for cut > 0 && !utf8.RuneStart(address[cut]) {
			cut--
		}
		address = address[:cut] + ellipsis
	}
	return address + suffix
}

// Drift counts the plan's resource changes by action, as a drift run
// reports them.
func (p *Plan) Drift() Drift {
	var d Drift
	var addresses []string
	for i := range p.resources {
		r := &p.resources[i]
		switch r.kind {
		case kindCreate:
			d.Create++
		case kindUpdate:
			d.Update++
		case kindReplace:
			d.Replace++
		case kindDelete:
			d.Delete++
		default:
			continue
		}
		addresses = append(addresses, r.address)
	}
	sort.Strings(addresses)
	// A current and a deposed object share an address.
	addresses = slices.Compact(addresses)
	if len(addresses) > MaxDriftResources {
		addresses = addresses[:MaxDriftResources]
	}
	d.Resources = addresses
	d.Detected = d.Create+d.Update+d.Replace+d.Delete > 0
	return d
}

// Destructive reports whether applying the plan deletes an object: a
// resource change whose actions include "delete" (a plain delete, or a
// replacement in either order). Forget, import and move are not
// destructive; neither are output changes.
func (p *Plan) Destructive() bool {
	for _, r := range p.resources {
		for _, a := range r.actions {
			if a == "delete" {
				return true
			}
		}
	}
	return false
}
