package state

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestBackupSetRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	spec := BackupSpec{Suffix: "0123456789abcdef-m", Namespace: "ns", Serial: 7, Lineage: "l",
		Chunks: [][]byte{[]byte("aaaa"), []byte("bb")}, Resources: 3, InputsHash: "h2:x",
		Labels: OwnerLabels(KindMachine, "m-0", "demo"), TakenAt: t0, SourceJob: "job"}
	set := NewBackupSet(spec)
	if len(set) != 2 || set[0].Name != "captf-state-backup-0123456789abcdef-m-7" || set[1].Name != set[0].Name+"-part-1" {
		t.Fatalf("names = %s, %s", set[0].Name, set[1].Name)
	}
	if set[0].Labels[LabelState] != "" || set[0].Labels[infrav1.StateBackupSuffixLabel] != spec.Suffix || set[0].Labels[LabelOwnerName] != "m-0" {
		t.Errorf("labels = %v: want the owner and backup labels and no tfstate label", set[0].Labels)
	}
	if set[0].Annotations[infrav1.InputsHashAnnotation] != "h2:x" || set[1].Annotations[infrav1.InputsHashAnnotation] != "" {
		t.Error("the inputs hash belongs on the base Secret only")
	}
	older := NewBackupSet(BackupSpec{Suffix: spec.Suffix, Serial: 5, Chunks: [][]byte{[]byte("c")}, TakenAt: t0})
	other := NewBackupSet(BackupSpec{Suffix: spec.Suffix, Serial: 7, Chunks: [][]byte{[]byte("d")}, TakenAt: t0.Add(time.Minute), Disambiguate: true})
	incomplete := NewBackupSet(BackupSpec{Suffix: spec.Suffix, Serial: 9, Chunks: [][]byte{[]byte("e"), []byte("f")}, TakenAt: t0})[1:]
	all := append(append(append(append([]corev1.Secret{}, set...), older...), other...), incomplete...)
	got := Backups(all)
	if len(got) != 4 {
		t.Fatalf("Backups found %d sets, want 4", len(got))
	}
	want := []struct {
		serial   int64
		complete bool
		bytes    int64
	}{{9, false, 1}, {7, true, 1}, {7, true, 6}, {5, true, 1}}
	for i, w := range want {
		if got[i].Serial != w.serial || got[i].Complete != w.complete || got[i].Bytes != w.bytes {
			t.Errorf("set %d = %+v, want serial %d complete %v bytes %d", i, got[i], w.serial, w.complete, w.bytes)
		}
	}
	if got[1].Name == got[2].Name || got[1].Name != other[0].Name {
		t.Errorf("two sets of serial 7 must have different names, newest first: %s, %s", got[1].Name, got[2].Name)
	}
	if got[2].InputsHash != "h2:x" || got[2].Resources != 3 || got[2].Chunks[1] != set[1].Name {
		t.Errorf("set = %+v", got[2])
	}
}
