package custody

import (
	"strings"
	"testing"

	"captf.io/captf/pkg/state"
)

// TestRestoreSerial: a restore request names a serial not consumed yet;
// anything else starts nothing, and only what is not a serial is said.
func TestRestoreSerial(t *testing.T) {
	testCases := []struct {
		name, value string
		last        int64
		want        int64
		says        string // "" when nothing is said
	}{
		{"a serial", "7", 3, 7, ""},
		{"the serial restored (or failed) last", "7", 7, 0, ""},
		{"not a number", "latest", 0, 0, `captf.io/restore-state="latest" is not a state serial`},
		{"zero", "0", 0, 0, "is not a state serial"},
		{"negative", "-2", 0, 0, "is not a state serial"},
		{"empty", "", 0, 0, "is not a state serial"},
		{"beyond int64", "99999999999999999999", 0, 0, "is not a state serial"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := RestoreSerial(tc.value, tc.last)
			if got != tc.want || (tc.says == "") != (msg == "") || !strings.Contains(msg, tc.says) {
				t.Errorf("RestoreSerial(%q, %d) = %d, %q; want %d, saying %q", tc.value, tc.last, got, msg, tc.want, tc.says)
			}
			if msg != "" && !strings.Contains(msg, "status.stateBackups[].serial") {
				t.Errorf("the message %q does not say what to set", msg)
			}
		})
	}
}

// TestRestoreBackup: only a complete backup set of the serial restores.
func TestRestoreBackup(t *testing.T) {
	sets := sets([]int64{9, 7, 5}, 7)
	if b, msg := RestoreBackup(sets, 9); b == nil || b.Serial != 9 || msg != "" {
		t.Errorf("serial 9: %+v, %q; want its complete set", b, msg)
	}
	for _, serial := range []int64{7, 6} {
		b, msg := RestoreBackup(sets, serial)
		if b != nil || !strings.Contains(msg, "No complete state backup has serial") || !strings.Contains(msg, "status.stateBackups") {
			t.Errorf("serial %d: %+v, %q; want none, and where to look", serial, b, msg)
		}
	}
	if b, _ := RestoreBackup([]state.Backup(nil), 1); b != nil {
		t.Errorf("no sets: %+v, want none", b)
	}
}
