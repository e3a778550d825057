package workload

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestWatchFilter(t *testing.T) {
	labelled := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{WatchFilterLabel: "team-a"}}}
	other := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{WatchFilterLabel: "team-b"}}}
	plain := &infrav1.TerraformMachine{}
	testCases := []struct {
		filter string
		want   [3]bool
	}{
		{"", [3]bool{true, true, true}},
		{"team-a", [3]bool{true, false, false}},
	}
	for _, tc := range testCases {
		p := watchFilterPredicate(tc.filter)
		for i, obj := range []*infrav1.TerraformMachine{labelled, other, plain} {
			if got := p.Create(event.CreateEvent{Object: obj}); got != tc.want[i] {
				t.Errorf("--watch-filter=%q admits object %d: %v, want %v", tc.filter, i, got, tc.want[i])
			}
		}
	}
}
