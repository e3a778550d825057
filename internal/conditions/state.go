package conditions

import (
	"fmt"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// StateFacts are what reading the object's state found.
type StateFacts struct {
	// Secret is the name of the state's base Secret.
	Secret string
	// RetainedFrom is the UID of a deleted object of this name that
	// retained the state, when the object does not adopt it.
	RetainedFrom string
	// Read: the state was read and decoded: serial, managed resources
	// and gzipped size.
	Read            bool
	Serial          int64
	Resources       int
	CompressedBytes int64
	// NotFound: there is no state Secret.
	NotFound bool
	// EverApplied: the object applied before (provisioned, an applied
	// record or marker, or a backup).
	EverApplied bool
	// UnconfirmedJob names the apply Job whose outcome is unknown (""
	// when none).
	UnconfirmedJob string
	// Deleting: the object has a deletion timestamp.
	Deleting bool
	// Destroyed: the object's destroy succeeded, so the cleanup that
	// follows deletes its state: a state not there (a cleanup cut short,
	// or another manager's) or read halfway deleted is neither lost nor
	// unreadable.
	Destroyed bool
	// Unreadable is why a state that exists cannot be read (the state
	// reader's reason: inconsistent, encrypted, corrupt, ...).
	Unreadable string
}

// StateReadable is the StateReadable condition: whether the state can be
// read and, when it cannot, what the user can do.
func StateReadable(f StateFacts) metav1.Condition {
	c := metav1.Condition{Type: infrav1.StateReadableCondition}
	switch {
	case f.RetainedFrom != "":
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.RetainedStateFoundReason
		c.Message = fmt.Sprintf("State %s was retained by a deleted object of this name (UID %s); set spec.adoptRetainedState to adopt it, or delete it", f.Secret, f.RetainedFrom)
	case f.Read:
		c.Status, c.Reason = metav1.ConditionTrue, infrav1.StateReadReason
		c.Message = fmt.Sprintf("Read serial %d (%d resources, %d bytes compressed)", f.Serial, f.Resources, f.CompressedBytes)
	case f.Destroyed:
		c.Status, c.Reason = metav1.ConditionUnknown, infrav1.StateNotFoundReason
		c.Message = fmt.Sprintf("The destroy succeeded and the cleanup deletes the state Secret %s", f.Secret)
	case f.NotFound && f.EverApplied:
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.StateLostReason
		c.Message = fmt.Sprintf("The object applied before but its state Secret %s is gone; restore it (see the state-restore runbook)", f.Secret)
	case f.NotFound && f.UnconfirmedJob != "":
		// An object without a state whose only apply's outcome is unknown.
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.ApplyOutcomeUnknownReason
		c.Message = fmt.Sprintf("No state Secret %s exists and apply Job %s ended without a result, so whether it created resources is unknown; no apply runs. "+
			"If it created nothing, set the annotation %s=%s on this object; if a backup exists, restore it (captf.io/restore-state)",
			f.Secret, f.UnconfirmedJob, infrav1.ConfirmNoResourcesAnnotation, f.UnconfirmedJob)
		if f.Deleting {
			c.Message += "; or set spec.deletionPolicy: Retain to release the object without a destroy"
		}
	case f.NotFound:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, infrav1.StateNotFoundReason, "No state yet"
	default:
		c.Status, c.Reason = metav1.ConditionFalse, f.Unreadable
		c.Message = fmt.Sprintf("State %s cannot be read (%s); no Job starts and deletion is held (see the state-unreadable runbook)", f.Secret, f.Unreadable)
	}
	return c
}

// cut keeps the first n bytes of s, on a rune boundary, and says so.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// maxLockField bounds each field of a lock's info that StateLocked
// quotes: whoever can write the lock Lease writes them.
const maxLockField = 256

// StateLocked is a state whose lock another holder than the object's Jobs
// holds (who, for which operation, since when): CAPTF never unlocks it.
func StateLocked(who, operation, since string) metav1.Condition {
	return metav1.Condition{Type: infrav1.StateReadableCondition, Status: metav1.ConditionFalse, Reason: infrav1.StateLockedReason,
		Message: fmt.Sprintf("The state lock is held by %q (operation %q, since %s), which is not one of this object's Jobs; CAPTF never unlocks it (see the stale-lock runbook)",
			cut(who, maxLockField), cut(operation, maxLockField), cut(since, maxLockField))}
}
