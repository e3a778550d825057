package workload

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
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

func TestUnownedJobToObject(t *testing.T) {
	owned := true
	job := func(kind string, controller bool) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "captf-m-web-0-destroy-a1-abcdef",
			Labels:      map[string]string{infrav1.OwnerKindLabel: kind},
			Annotations: map[string]string{infrav1.OwnerAnnotation: "web-0", infrav1.OwnerUIDAnnotation: "uid-1"}}}
		if controller {
			j.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: "web-0", UID: "uid-1", Controller: &owned}}
		}
		return j
	}
	testCases := []struct {
		name string
		job  *batchv1.Job
		want int
	}{
		{"an unowned Job of a machine wakes the machine", job("TerraformMachine", false), 1},
		{"an owned Job is the owner watch's", job("TerraformMachine", true), 0},
		{"another kind's Job", job("TerraformCluster", false), 0},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := unownedJobToObject("TerraformMachine")(t.Context(), tc.job)
			if len(got) != tc.want || (tc.want == 1 && got[0].Name != "web-0" || tc.want == 1 && got[0].Namespace != "ns") {
				t.Errorf("requests %v, want %d for ns/web-0", got, tc.want)
			}
		})
	}
}
