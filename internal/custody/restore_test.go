package custody

import (
	"strings"
	"testing"

	infrav1 "captf.io/captf/api/v1alpha1"
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

// TestAskRestore: what a restore request asks, each rule a row, before
// and after its backup is looked for.
func TestAskRestore(t *testing.T) {
	const notFound, failed, succeeded = infrav1.RestoreBackupNotFoundReason, infrav1.RestoreFailedReason, infrav1.StateRestoredReason
	testCases := []struct {
		name      string
		value     string
		requested bool
		last      int64
		reported  string
		want      RestoreAsk
		// found: the backup of the serial is there (Pick).
		found  bool
		picked RestoreAsk
	}{
		{name: "no request", want: RestoreAsk{}},
		{name: "a failed restore's request removed re-arms its serial", last: 7, reported: failed, want: RestoreAsk{Rearm: true}},
		{name: "a succeeded restore's request removed stays recorded", last: 7, reported: succeeded, want: RestoreAsk{}},
		{name: "a request whose backup was not found, withdrawn", reported: notFound, want: RestoreAsk{DropNotFound: true}},
		{name: "not a serial", value: "latest", requested: true, want: RestoreAsk{NotFound: "is not a state serial"}},
		{name: "not a serial, after one not found", value: "latest", requested: true, reported: notFound, want: RestoreAsk{NotFound: "is not a state serial"}},
		{name: "a consumed serial", value: "7", requested: true, last: 7, want: RestoreAsk{}},
		{name: "a consumed serial, after one not found", value: "7", requested: true, last: 7, reported: notFound, want: RestoreAsk{DropNotFound: true}},
		{name: "a serial whose backup is there", value: "9", requested: true, last: 7, found: true,
			want: RestoreAsk{Serial: 9}, picked: RestoreAsk{Serial: 9}},
		{name: "a serial whose backup is there, after one not found", value: "9", requested: true, reported: notFound, found: true,
			want: RestoreAsk{Serial: 9, DropNotFound: true}, picked: RestoreAsk{Serial: 9, DropNotFound: true}},
		{name: "a serial without a backup", value: "8", requested: true, reported: notFound,
			want: RestoreAsk{Serial: 8, DropNotFound: true}, picked: RestoreAsk{Serial: 8, NotFound: "No complete state backup has serial 8"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := AskRestore(tc.value, tc.requested, tc.last, tc.reported)
			if !sameAsk(got, tc.want) {
				t.Fatalf("AskRestore = %+v, want %+v", got, tc.want)
			}
			if got.Serial == 0 {
				return
			}
			b, picked := got.Pick(sets([]int64{9, 7}))
			if (b != nil) != tc.found || !sameAsk(picked, tc.picked) {
				t.Errorf("Pick = %v, %+v; want found %t, %+v", b, picked, tc.found, tc.picked)
			}
		})
	}
}

// sameAsk compares asks, NotFound by what want's says.
func sameAsk(got, want RestoreAsk) bool {
	says := strings.Contains(got.NotFound, want.NotFound) && (got.NotFound == "") == (want.NotFound == "")
	got.NotFound, want.NotFound = "", ""
	return says && got == want
}
