package custody

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/pkg/state"
)

// sets are backup sets newest first: serial n complete unless listed in
// incomplete.
func sets(serials []int64, incomplete ...int64) []state.Backup {
	var out []state.Backup
	for _, s := range serials {
		b := state.Backup{Serial: s, Complete: true}
		for _, i := range incomplete {
			if i == s {
				b.Complete = false
			}
		}
		out = append(out, b)
	}
	return out
}

func serialsOf(bs []state.Backup) []int64 {
	var out []int64
	for _, b := range bs {
		out = append(out, b.Serial)
	}
	return out
}

// TestPrunable: --state-backups complete sets are kept, a set a restore
// request pins is kept on top, and of the incomplete sets only the newest
// (maybe still being written).
func TestPrunable(t *testing.T) {
	testCases := []struct {
		name       string
		sets       []state.Backup
		keep       int
		pinned     string
		wantKept   []int64
		wantPruned []int64
	}{
		{"within the count", sets([]int64{5, 4}), 3, "", []int64{5, 4}, nil},
		{"beyond the count: the oldest go", sets([]int64{7, 6, 5, 4}), 2, "", []int64{7, 6}, []int64{5, 4}},
		{"a pinned set is kept and not counted", sets([]int64{7, 6, 5, 4}), 2, "4", []int64{7, 6, 4}, []int64{5}},
		{"the newest incomplete set may still be written", sets([]int64{8, 7, 6}, 8), 1, "", []int64{8, 7}, []int64{6}},
		{"an older incomplete set goes", sets([]int64{8, 7, 6}, 7), 3, "", []int64{8, 6}, []int64{7}},
		{"none kept", sets([]int64{3, 2}), 0, "", nil, []int64{3, 2}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			kept, pruned := Prunable(tc.sets, tc.keep, tc.pinned)
			if got := serialsOf(kept); !equal(got, tc.wantKept) {
				t.Errorf("kept %v, want %v", got, tc.wantKept)
			}
			if got := serialsOf(pruned); !equal(got, tc.wantPruned) {
				t.Errorf("pruned %v, want %v", got, tc.wantPruned)
			}
		})
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestListed: the status lists complete sets only, newest first, at most
// MaxListedBackups.
func TestListed(t *testing.T) {
	var many []int64
	for s := int64(40); s > 0; s-- {
		many = append(many, s)
	}
	got := Listed(sets(many, 40))
	if len(got) != MaxListedBackups || got[0].Serial != 39 {
		t.Fatalf("Listed = %d sets from serial %d, want %d from 39", len(got), got[0].Serial, MaxListedBackups)
	}
}

// TestUnkept: what the engine re-owns: a Secret of the object that lacks
// its owner reference or its protection; never one retained for another
// object, nor one being deleted for lacking protection.
func TestUnkept(t *testing.T) {
	obj := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: types.UID("uid-2")}}
	owned := metav1.OwnerReference{Name: "demo", UID: "uid-2"}
	earlier := metav1.OwnerReference{Name: "demo", UID: "uid-1"}
	now := metav1.NewTime(time.Now())
	testCases := []struct {
		name   string
		secret corev1.Secret
		want   bool
	}{
		{"owned and protected", corev1.Secret{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{owned}, Finalizers: []string{protection.Finalizer}}}, false},
		{"owned, unprotected", corev1.Secret{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{owned}}}, true},
		{"owned by an earlier object of the name", corev1.Secret{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{earlier}, Finalizers: []string{protection.Finalizer}}}, true},
		{"owned, unprotected, being deleted", corev1.Secret{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{owned}, DeletionTimestamp: &now, Finalizers: []string{"other"}}}, false},
		{"retained for another object", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{infrav1.RetainedFromUIDLabel: "uid-0"}}}, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unkept(&tc.secret, obj); got != tc.want {
				t.Errorf("Unkept = %v, want %v", got, tc.want)
			}
		})
	}
	s := corev1.Secret{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{earlier, owned, {Name: "other", UID: "uid-9"}}}}
	if got := OwnersOtherThan(&s, obj); len(got) != 2 || got[0].UID != "uid-2" || got[1].UID != "uid-9" {
		t.Errorf("OwnersOtherThan = %v, want the object's and the other owner's only", got)
	}
}

// TestBackupOf: a backup holds the state's pieces in the state's order;
// a set of the serial with the same content is the backup taken already;
// one with other content under the same name makes the new one
// disambiguate its name; sets of other serials do not matter.
func TestBackupOf(t *testing.T) {
	const suffix = "default-c-0a1b2c"
	piece := func(name, data string) corev1.Secret {
		return corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{state.DataKey: []byte(data)}}
	}
	st := &state.State{Serial: 7, Lineage: "l-1", ManagedResources: 3,
		Secrets: []state.SecretRef{{Name: "tfstate-" + suffix}, {Name: "tfstate-" + suffix + "-part-1"}}}
	// Read in another order than the state's, with a stranger.
	secrets := []corev1.Secret{piece("tfstate-"+suffix+"-part-1", "second"), piece("other", "x"), piece("tfstate-"+suffix, "first")}
	spec, taken := BackupOf(st, secrets, nil, suffix)
	if taken || len(spec.Chunks) != 2 || string(spec.Chunks[0]) != "first" || string(spec.Chunks[1]) != "second" {
		t.Fatalf("BackupOf = %+v, %v; want the two pieces in the state's order", spec, taken)
	}
	if spec.Serial != 7 || spec.Lineage != "l-1" || spec.Resources != 3 || spec.Suffix != suffix || spec.Disambiguate {
		t.Errorf("BackupOf = %+v, want serial 7, lineage l-1, 3 resources, the suffix, no disambiguation", spec)
	}
	digest := state.BackupDigest(spec.Chunks)
	name := state.BackupSetName(suffix, 7)
	for _, tc := range []struct {
		name                string
		sets                []state.Backup
		taken, disambiguate bool
	}{
		{"the same content backed up", []state.Backup{{Name: name, Serial: 7, Digest: digest}}, true, false},
		{"other content under the name", []state.Backup{{Name: name, Serial: 7, Digest: "other"}}, false, true},
		{"other content, already disambiguated", []state.Backup{{Name: name + "-0f0e0d0c", Serial: 7, Digest: "other"}}, false, false},
		{"another serial", []state.Backup{{Name: state.BackupSetName(suffix, 6), Serial: 6, Digest: digest}}, false, false},
	} {
		spec, taken := BackupOf(st, secrets, tc.sets, suffix)
		if taken != tc.taken || spec.Disambiguate != tc.disambiguate {
			t.Errorf("%s: taken %v, disambiguate %v; want %v, %v", tc.name, taken, spec.Disambiguate, tc.taken, tc.disambiguate)
		}
	}
}
