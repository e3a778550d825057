package outputs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// MaxExportsBytes is the largest compact exports published to
// status.exports.
const MaxExportsBytes = 65536

// ExportsNumberMessage is the OutputsInvalid message of exports holding a
// number with a fraction or an exponent: such exports have no canonical
// form, so the inputs of the cluster's machines and pools cannot be hashed.
const ExportsNumberMessage = "exports contains a fractional or exponent number; export numbers as integers or strings"

// Cluster is what a cluster module's outputs set (contract §10.3).
type Cluster struct {
	// Endpoint is control_plane_endpoint; nil while the module reports
	// null.
	Endpoint *clusterv1.APIEndpoint
	// FailureDomains are failure_domains in the module's order, with
	// control_plane defaulted to true and empty attributes left nil; nil
	// for null and [] alike: both clear status.failureDomains.
	FailureDomains []clusterv1.FailureDomain
	// Exports is the exports output as compact JSON, "{}" for null.
	Exports json.RawMessage
	// ExportsPublishable: Exports fits status.exports (at most
	// MaxExportsBytes).
	ExportsPublishable bool
	// Health is the health reading; nil when it is not known.
	Health *Health
}

// String summarises c without any output value: exports may hold
// anything, and outputs are sensitive.
func (c Cluster) String() string {
	health := "unknown"
	if c.Health != nil {
		health = c.Health.State
	}
	return fmt.Sprintf("{endpoint:%t failureDomains:%d exports:%dB publishable:%t health:%s}",
		c.Endpoint != nil, len(c.FailureDomains), len(c.Exports), c.ExportsPublishable, health)
}

// Format prints String for every verb, so %v and %+v show no value.
func (c Cluster) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// MarshalLog is what logr loggers print.
func (c Cluster) MarshalLog() any { return c.String() }

// LogValue is what slog prints.
func (c Cluster) LogValue() slog.Value { return slog.StringValue(c.String()) }

type endpointJSON struct {
	Host string      `json:"host"`
	Port json.Number `json:"port"`
}

type failureDomainJSON struct {
	Name         string            `json:"name"`
	ControlPlane *bool             `json:"control_plane"`
	Attributes   map[string]string `json:"attributes"`
}

// ReadCluster reads a cluster module's outputs. When the Report is not
// Valid, only Health may be set.
func ReadCluster(outs map[string]state.Output) (Cluster, Report) {
	r := read(contract.RoleCluster, values(contract.RoleCluster, outs))
	var fds []failureDomainJSON
	if r.known("failure_domains") && r.decode("failure_domains", &fds) {
		uniqueNames(&r, fds)
	}
	if r.known("exports") && hasNonInteger(r.values["exports"]) {
		r.fail("exports", ExportsNumberMessage)
	}
	var endpoint *clusterv1.APIEndpoint
	if r.known("control_plane_endpoint") {
		endpoint = readEndpoint(&r)
	}
	c := Cluster{Health: r.health()}
	if !r.report.Valid() {
		return c, r.report
	}
	c.Endpoint = endpoint
	for _, fd := range fds {
		out := clusterv1.FailureDomain{Name: fd.Name, ControlPlane: fd.ControlPlane}
		if out.ControlPlane == nil {
			yes := true
			out.ControlPlane = &yes
		}
		if len(fd.Attributes) > 0 {
			out.Attributes = fd.Attributes
		}
		c.FailureDomains = append(c.FailureDomains, out)
	}
	c.Exports = json.RawMessage("{}")
	if r.known("exports") {
		var b bytes.Buffer
		if err := json.Compact(&b, r.values["exports"]); err == nil {
			c.Exports = b.Bytes()
		}
	}
	c.ExportsPublishable = len(c.Exports) <= MaxExportsBytes
	return c, r.report
}

func readEndpoint(r *reading) *clusterv1.APIEndpoint {
	var e endpointJSON
	port, ok := int64(0), false
	if json.Unmarshal(r.values["control_plane_endpoint"], &e) == nil {
		port, ok = integer(e.Port, 1, 65535)
	}
	if !ok {
		r.fail("control_plane_endpoint", "control_plane_endpoint does not have the contract's shape")
		return nil
	}
	return &clusterv1.APIEndpoint{Host: e.Host, Port: int32(port)}
}

// uniqueNames enforces what the schema cannot: failure-domain names are
// the key of status.failureDomains.
func uniqueNames(r *reading, fds []failureDomainJSON) {
	first := map[string]int{}
	for i, fd := range fds {
		if j, seen := first[fd.Name]; seen {
			r.fail("failure_domains", "failure_domains/"+strconv.Itoa(i)+"/name repeats failure_domains/"+strconv.Itoa(j)+"/name: names must be unique")
			continue
		}
		first[fd.Name] = i
	}
}

// hasNonInteger reports whether a JSON value holds a number with a
// fraction or an exponent anywhere.
func hasNonInteger(v json.RawMessage) bool {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	for {
		t, err := d.Token()
		if err != nil {
			return false
		}
		if n, ok := t.(json.Number); ok && strings.ContainsAny(string(n), ".eE") {
			return true
		}
	}
}

// integer converts a JSON number the schema accepted as an integer (which
// includes 3.0) within [lo, hi].
func integer(n json.Number, lo, hi int64) (int64, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, i >= lo && i <= hi
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f < float64(lo) || f > float64(hi) || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}
