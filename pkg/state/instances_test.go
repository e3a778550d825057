package state

import "testing"

func TestManagedInstances(t *testing.T) {
	raw := []byte(`{"version":4,"resources":[
		{"mode":"managed","type":"null_resource","name":"one","instances":[{}]},
		{"mode":"managed","type":"random_id","name":"member","instances":[{"index_key":0},{"index_key":1}]},
		{"mode":"data","type":"external","name":"x","instances":[{}]}]}`)
	if n, err := ManagedInstances(raw); err != nil || n != 3 {
		t.Errorf("ManagedInstances = %d, %v; want 3 (data sources are not destroyed)", n, err)
	}
	if _, err := ManagedInstances([]byte("{")); err == nil {
		t.Error("a truncated state was counted")
	}
}
