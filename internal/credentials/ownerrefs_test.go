package credentials

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func ref(kind, name, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: kind, Name: name, UID: typesUID(uid)}
}

func TestWithOwnerRef(t *testing.T) {
	blocking := ref("TerraformCluster", "a", "1")
	blocking.BlockOwnerDeletion = ptr.To(true)
	controller := ref("TerraformCluster", "a", "1")
	controller.Controller = ptr.To(true)
	testCases := []struct {
		name        string
		refs        []metav1.OwnerReference
		add         metav1.OwnerReference
		want        []metav1.OwnerReference
		wantChanged bool
	}{
		{"first owner", nil, ref("TerraformCluster", "a", "1"), []metav1.OwnerReference{ref("TerraformCluster", "a", "1")}, true},
		{"already there", []metav1.OwnerReference{ref("TerraformCluster", "a", "1")}, ref("TerraformCluster", "a", "1"),
			[]metav1.OwnerReference{ref("TerraformCluster", "a", "1")}, false},
		{"second owner appended", []metav1.OwnerReference{ref("TerraformCluster", "a", "1")}, ref("TerraformMachine", "m", "2"),
			[]metav1.OwnerReference{ref("TerraformCluster", "a", "1"), ref("TerraformMachine", "m", "2")}, true},
		{"same name other kind is another owner", []metav1.OwnerReference{ref("TerraformCluster", "a", "1")}, ref("TerraformMachine", "a", "2"),
			[]metav1.OwnerReference{ref("TerraformCluster", "a", "1"), ref("TerraformMachine", "a", "2")}, true},
		{"earlier UID replaced in place", []metav1.OwnerReference{ref("TerraformMachine", "m", "old"), ref("TerraformCluster", "a", "1")}, ref("TerraformMachine", "m", "new"),
			[]metav1.OwnerReference{ref("TerraformMachine", "m", "new"), ref("TerraformCluster", "a", "1")}, true},
		{"duplicates collapse to one", []metav1.OwnerReference{ref("TerraformCluster", "a", "1"), ref("TerraformCluster", "a", "0")}, ref("TerraformCluster", "a", "1"),
			[]metav1.OwnerReference{ref("TerraformCluster", "a", "1")}, true},
		{"blockOwnerDeletion cleared", []metav1.OwnerReference{blocking}, ref("TerraformCluster", "a", "1"),
			[]metav1.OwnerReference{ref("TerraformCluster", "a", "1")}, true},
		{"controller flag cleared", []metav1.OwnerReference{controller}, ref("TerraformCluster", "a", "1"),
			[]metav1.OwnerReference{ref("TerraformCluster", "a", "1")}, true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := withOwnerRef(tc.refs, tc.add)
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d references %v, want %v", len(got), got, tc.want)
			}
			for i := range got {
				if !equalRef(got[i], tc.want[i]) {
					t.Errorf("reference %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestWithoutOwnerRef(t *testing.T) {
	refs := []metav1.OwnerReference{ref("TerraformCluster", "a", "1"), ref("TerraformMachine", "m", "old")}
	got, removed := withoutOwnerRef(refs, ref("TerraformMachine", "m", "new"))
	if !removed || len(got) != 1 || got[0].Name != "a" {
		t.Fatalf("withoutOwnerRef = %v, %v; want only the cluster's reference left (any UID of the machine removed)", got, removed)
	}
	if _, removed := withoutOwnerRef(got, ref("TerraformMachine", "m", "new")); removed {
		t.Fatal("removing an absent reference reported a change")
	}
}

func typesUID(s string) types.UID { return types.UID(s) }
