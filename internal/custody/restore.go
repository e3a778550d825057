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
