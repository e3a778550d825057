package custody

import (
	"fmt"
	"strconv"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// RestoreSerial reads value, the object's captf.io/restore-state: the
// serial to restore, 0 with no message when there is nothing to do (the
// serial was consumed already: restored or failed, it is never tried
// again), or why the request is not one (a message for
// RestoreBackupNotFound).
func RestoreSerial(value string, lastRestored int64) (int64, string) {
	serial, err := strconv.ParseInt(value, 10, 64)
	switch {
	case err != nil || serial < 1:
		return 0, fmt.Sprintf("%s=%q is not a state serial; set it to one of status.stateBackups[].serial", infrav1.RestoreStateAnnotation, value)
	case serial == lastRestored:
		return 0, ""
	}
	return serial, ""
}

// RestoreBackup finds the complete backup set of serial among sets, or says
// why there is none (a message for RestoreBackupNotFound).
func RestoreBackup(sets []state.Backup, serial int64) (*state.Backup, string) {
	for i := range sets {
		if sets[i].Serial == serial && sets[i].Complete {
			return &sets[i], ""
		}
	}
	return nil, fmt.Sprintf("No complete state backup has serial %d; status.stateBackups lists the ones that can be restored", serial)
}

// RestoreAsk is what a pass makes of captf.io/restore-state before it
// looks for the backup (AskRestore), and once it looked (Pick).
type RestoreAsk struct {
	// Serial is the serial to restore (0: none).
	Serial int64
	// Rearm: the request of a failed restore was removed, so its serial
	// may be tried again (status.lastRestoredSerial goes back to 0).
	Rearm bool
	// NotFound says why the request restores nothing
	// (RestoreBackupNotFound); DropNotFound: what an earlier request's
	// backup not found said goes, the request being another now.
	NotFound     string
	DropNotFound bool
}

// AskRestore reads the object's captf.io/restore-state (value, when
// requested), lastRestored its status.lastRestoredSerial and reported the
// reason RestoreJobSucceeded has as read. A removed request re-arms the
// serial of a failed restore (a success removed it itself and stays
// recorded). A request that is not a serial is said; a consumed serial
// starts nothing. What a request whose backup was not found said goes once
// the request is withdrawn or consumed (and, Pick, once its backup is
// found).
func AskRestore(value string, requested bool, lastRestored int64, reported string) RestoreAsk {
	wasNotFound := reported == infrav1.RestoreBackupNotFoundReason
	if !requested {
		return RestoreAsk{Rearm: reported == infrav1.RestoreFailedReason, DropNotFound: wasNotFound}
	}
	serial, msg := RestoreSerial(value, lastRestored)
	if serial == 0 {
		return RestoreAsk{NotFound: msg, DropNotFound: msg == "" && wasNotFound}
	}
	return RestoreAsk{Serial: serial, DropNotFound: wasNotFound}
}

// Pick is the complete backup of a.Serial among sets (RestoreBackup): nil,
// and a saying why, when there is none.
func (a RestoreAsk) Pick(sets []state.Backup) (*state.Backup, RestoreAsk) {
	b, msg := RestoreBackup(sets, a.Serial)
	if b == nil {
		a.NotFound, a.DropNotFound = msg, false
	}
	return b, a
}
