package decide

import "time"

// Entry is what a pass knows of its object before it observes anything
// else: whether it is being deleted, whether its Cluster API owner lets it
// go on (set, the kind expected, found), and whether it carries CAPTF's
// finalizer.
type Entry struct {
	Deleting, OwnerNotReady, HasFinalizer bool
}

// Door is how a pass goes on from its entry.
type Door string

// Doors, in the order Enter tries them.
const (
	// DoorWaitForOwner: a live object waits for its owner before anything
	// else, its finalizer included (Cluster API's "wait for the owner");
	// it looks again after Timing.Gate, and its owner's change wakes it
	// sooner.
	DoorWaitForOwner Door = "WaitForOwner"
	// DoorAddFinalizer: a live object takes CAPTF's finalizer before it
	// observes or writes anything else; the write's own event brings the
	// next pass.
	DoorAddFinalizer Door = "AddFinalizer"
	// DoorLeave: a deleting object without the finalizer is not CAPTF's
	// to keep: the pass leaves it.
	DoorLeave Door = "Leave"
	// DoorObserve: the pass observes, decides and acts. A deleting object
	// whose owner is not ready goes on too: its deletion needs no owner.
	DoorObserve Door = "Observe"
)

// Enter is the first row of every pass: where it goes from its entry, and
// when a wait looks again (t's zero fields are the defaults).
func Enter(e Entry, t Timing) (Door, time.Duration) {
	switch {
	case !e.Deleting && e.OwnerNotReady:
		return DoorWaitForOwner, t.Effective().Gate
	case !e.Deleting && !e.HasFinalizer:
		return DoorAddFinalizer, 0
	case e.Deleting && !e.HasFinalizer:
		return DoorLeave, 0
	}
	return DoorObserve, 0
}
