package credentials

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Outcome says what EnsureMirror, ReleaseMirror or RevokeMirror did.
type Outcome string

const (
	// OutcomeCreated: the mirror did not exist and was created.
	OutcomeCreated Outcome = "Created"
	// OutcomeUpdated: the mirror was written: its data (see
	// Result.DataRewritten), owner references, labels or annotations.
	OutcomeUpdated Outcome = "Updated"
	// OutcomeUnchanged: the mirror was already as wanted; nothing was written.
	OutcomeUnchanged Outcome = "Unchanged"
	// OutcomeConflict: a Secret that is not this identity's mirror holds the
	// name. It was not touched.
	OutcomeConflict Outcome = "Conflict"
	// OutcomeSourceNotFound: the identity's source Secret does not exist.
	OutcomeSourceNotFound Outcome = "SourceNotFound"
	// OutcomeSourceIncomplete: the source Secret lacks required keys
	// (Result.MissingKeys); the mirror was not written.
	OutcomeSourceIncomplete Outcome = "SourceIncomplete"
	// OutcomeReleased: the user's owner reference was removed; other users
	// keep the mirror.
	OutcomeReleased Outcome = "Released"
	// OutcomeRemoved: the mirror was deleted.
	OutcomeRemoved Outcome = "Removed"
	// OutcomeAbsent: there was no mirror to release or revoke.
	OutcomeAbsent Outcome = "Absent"
)

// Event reasons of the workload objects for mirror transitions.
const (
	// MirrorCreatedEvent is the Normal event reason for OutcomeCreated.
	MirrorCreatedEvent = "MirrorCreated"
	// MirrorRemovedEvent is the Normal event reason for OutcomeRemoved.
	MirrorRemovedEvent = "MirrorRemoved"
)

// ErrSourceUnreadable wraps a failed read of an identity's source Secret
// (other than NotFound). The caller reports IdentityAllowed=Unknown with
// IdentityCheckFailed and retries.
var ErrSourceUnreadable = errors.New("the source Secret could not be read")

// Result is what happened to one mirror. It carries names and key names,
// never a credential value.
type Result struct {
	// Outcome says what happened.
	Outcome Outcome
	// Identity is the identity's name.
	Identity string
	// Mirror is the mirror Secret.
	Mirror types.NamespacedName
	// Source is the identity's source Secret (EnsureMirror only).
	Source types.NamespacedName
	// SourceHash is the source data's hash (EnsureMirror, when read).
	SourceHash string
	// DataRewritten is true when the mirror's data was written.
	DataRewritten bool
	// MissingKeys are the required keys the source lacks.
	MissingKeys []string
	// Conflict says why the Secret holding the mirror's name is not a mirror.
	Conflict string
}

// Event returns the reason and note of the event a caller emits on the
// using object for this result, and false when the result is no transition
// worth an event. Events are emitted once per transition because a mirror
// is created or removed only once.
func (r Result) Event() (reason, note string, ok bool) {
	switch r.Outcome {
	case OutcomeCreated:
		return MirrorCreatedEvent, fmt.Sprintf("Created credentials mirror Secret %s of TerraformClusterIdentity %s", r.Mirror, r.Identity), true
	case OutcomeRemoved:
		return MirrorRemovedEvent, fmt.Sprintf("Removed credentials mirror Secret %s of TerraformClusterIdentity %s", r.Mirror, r.Identity), true
	}
	return "", "", false
}
