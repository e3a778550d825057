package outputs

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// MaxInstances is the most pool instances status.instances lists.
const MaxInstances = 1000

// Limits of status.instances the outputs schema leaves open.
const (
	maxInstanceID        = 256
	maxInstanceAddresses = 256
)

// Pool is what a machinepool module's outputs set (contract §10.5).
type Pool struct {
	// ProviderID is provider_id, the group's ID; "" when the module
	// reports none (null or "").
	ProviderID string
	// ProviderIDList is provider_id_list sorted, without duplicates; nil
	// when empty.
	ProviderIDList []string
	// Replicas is replicas.
	Replicas *int32
	// Instances are the first MaxInstances of instances, in the module's
	// order, with their addresses in canonical order; nil when empty.
	Instances []infrav1.MachinePoolInstance
	// Truncated: the module listed more than MaxInstances instances.
	Truncated bool
	// Health is the health reading; nil when it is not known.
	Health *Health
}

type instanceJSON struct {
	ProviderID    string        `json:"provider_id"`
	InstanceID    string        `json:"instance_id"`
	Addresses     []addressJSON `json:"addresses"`
	FailureDomain string        `json:"failure_domain"`
	State         string        `json:"state"`
}

// ReadPool reads a machinepool module's outputs. Instances beyond
// MaxInstances are dropped before validation (the schema's maxItems
// describes status.instances, not the module's list) and reported as
// InstancesTruncated, which leaves the Report valid. When the Report is
// not Valid, only Health may be set.
func ReadPool(outs map[string]state.Output) (Pool, Report) {
	raw := values(contract.RoleMachinePool, outs)
	total := capInstances(raw)
	r := read(contract.RoleMachinePool, raw)
	var p Pool
	if r.known("provider_id") {
		r.decode("provider_id", &p.ProviderID)
	}
	if r.known("provider_id_list") && r.decode("provider_id_list", &p.ProviderIDList) {
		slices.Sort(p.ProviderIDList)
		p.ProviderIDList = slices.Compact(p.ProviderIDList)
		if len(p.ProviderIDList) == 0 {
			p.ProviderIDList = nil
		}
	}
	var replicas json.Number
	if r.known("replicas") && r.decode("replicas", &replicas) {
		if n, ok := integer(replicas, 0, math.MaxInt32); ok {
			v := int32(n)
			p.Replicas = &v
		} else {
			r.fail("replicas", "replicas: must be at most "+strconv.Itoa(math.MaxInt32))
		}
	}
	var insts []instanceJSON
	if r.known("instances") && r.decode("instances", &insts) {
		checkInstances(&r, insts)
		if total > 0 {
			p.Truncated = true
			r.report.add(infrav1.InstancesTruncatedReason, "instances",
				"instances lists "+strconv.Itoa(total)+" members; status.instances keeps the first "+strconv.Itoa(MaxInstances))
		}
	}
	if !r.report.Valid() {
		return Pool{Health: r.health()}, r.report
	}
	for _, in := range insts {
		p.Instances = append(p.Instances, infrav1.MachinePoolInstance{
			ProviderID:    in.ProviderID,
			InstanceID:    in.InstanceID,
			Addresses:     addresses(in.Addresses),
			FailureDomain: in.FailureDomain,
			State:         infrav1.InstanceState(in.State),
		})
	}
	p.Health = r.health()
	return p, r.report
}

// capInstances keeps the first MaxInstances instances and returns how many
// the module listed when it listed more, else 0.
func capInstances(raw map[string]json.RawMessage) int {
	v, ok := raw["instances"]
	if !ok {
		return 0
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil || len(items) <= MaxInstances {
		return 0
	}
	b, err := json.Marshal(items[:MaxInstances])
	if err != nil {
		return 0
	}
	raw["instances"] = b
	return len(items)
}

// checkInstances enforces the limits of status.instances that the outputs
// schema leaves open.
func checkInstances(r *reading, insts []instanceJSON) {
	for i, in := range insts {
		at := "instances/" + strconv.Itoa(i)
		if utf8.RuneCountInString(in.InstanceID) > maxInstanceID {
			r.fail("instances", at+"/instance_id: must be at most "+strconv.Itoa(maxInstanceID)+" characters")
		}
		if len(in.Addresses) > maxInstanceAddresses {
			r.fail("instances", at+"/addresses: must list at most "+strconv.Itoa(maxInstanceAddresses)+" addresses")
		}
	}
}
