package decide

import (
	"testing"
	"time"
)

// TestEnter: the first row of every pass. A live object waits for its
// owner before it takes the finalizer, and takes the finalizer before it
// observes anything; a deleting one goes on without its owner, and is left
// alone without the finalizer.
func TestEnter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		e     Entry
		door  Door
		after time.Duration
	}{
		{"a live object without its owner waits for it, finalizer or not", Entry{OwnerNotReady: true}, DoorWaitForOwner, GateRequeue},
		{"a live object with its finalizer waits for its owner too", Entry{OwnerNotReady: true, HasFinalizer: true}, DoorWaitForOwner, GateRequeue},
		{"a live object with its owner takes the finalizer first", Entry{}, DoorAddFinalizer, 0},
		{"a live object with its owner and finalizer goes on", Entry{HasFinalizer: true}, DoorObserve, 0},
		{"a deleting object with its owner and finalizer goes on", Entry{Deleting: true, HasFinalizer: true}, DoorObserve, 0},
		{"a deleting object goes on without its owner", Entry{Deleting: true, OwnerNotReady: true, HasFinalizer: true}, DoorObserve, 0},
		{"a deleting object without the finalizer is left alone", Entry{Deleting: true}, DoorLeave, 0},
		{"a deleting object without owner nor finalizer is left alone", Entry{Deleting: true, OwnerNotReady: true}, DoorLeave, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			door, after := Enter(tc.e, Timing{})
			if door != tc.door || after != tc.after {
				t.Errorf("Enter(%+v) = %s after %s, want %s after %s", tc.e, door, after, tc.door, tc.after)
			}
		})
	}
	if _, after := Enter(Entry{OwnerNotReady: true}, Timing{Gate: 2 * time.Second}); after != 2*time.Second {
		t.Errorf("a shorter gate requeue: the owner's wait looks again after %s, want 2s", after)
	}
}
