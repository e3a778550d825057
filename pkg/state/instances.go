package state

import (
	"encoding/json"
	"fmt"
)

// ManagedInstances counts the instances of managed resources in a state
// JSON (as DecodeRaw returns it): what a destroy of that state deletes,
// one per count or for_each instance. It is a plain JSON decode, meant for
// a state already read within the limits.
func ManagedInstances(raw []byte) (int, error) {
	var doc struct {
		Resources []struct {
			Mode      string            `json:"mode"`
			Instances []json.RawMessage `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, fmt.Errorf("reading the state's resources: %w", err)
	}
	n := 0
	for _, r := range doc.Resources {
		if r.Mode == "managed" {
			n += len(r.Instances)
		}
	}
	return n, nil
}
