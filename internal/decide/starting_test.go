package decide

import (
	"testing"
	"time"
)

// TestStopped: each obstacle a Job meets as it starts is a wait of the
// operation decided, with its reason and when to look again; a gate's
// wait is announced.
func TestStopped(t *testing.T) {
	const uid = "6f1c2d9e-0000-4000-8000-000000000001"
	slot := SlotRequeue + Jitter(uid, SlotRequeue)
	if slot < SlotRequeue || slot > SlotRequeue+SlotRequeue/10 {
		t.Fatalf("a slot's wait looks again after %s, want within 10%% over %s", slot, SlotRequeue)
	}
	testCases := []struct {
		o         Obstacle
		op        Operation
		reason    Reason
		requeue   time.Duration
		announced bool
	}{
		{ObstacleCredentials, OpDestroy, ReasonIdentityNotAllowed, GateRequeue, false},
		{ObstacleRuntimeRefused, OpDrift, ReasonRuntimeCannotKeepState, PolicyRequeue, false},
		{ObstacleRuntimeUnknown, OpApply, ReasonRuntimeNotKnown, GateRequeue, false},
		{ObstacleHomePodRuns, OpDestroy, ReasonWaitingForRunLease, GateRequeue, false},
		{ObstacleNoJobSlot, OpApply, ReasonWaitingForJobSlot, slot, true},
		{ObstacleRunLeaseBusy, OpRefresh, ReasonWaitingForRunLease, GateRequeue, true},
		{ObstacleClusterOperation, OpApply, ReasonWaitingForClusterOperation, GateRequeue, true},
		{ObstacleMachineOperations, OpDestroy, ReasonWaitingForMachineOps, GateRequeue, true},
		{ObstacleJobRefused, OpPlan, ReasonJobRefused, PolicyRequeue, false},
		{ObstacleEvacuationHeld, OpDestroy, ReasonNamespaceTerminating, GateRequeue, false},
	}
	for _, tc := range testCases {
		t.Run(string(tc.o), func(t *testing.T) {
			d := Decision{Action: ActionStartJob, Op: tc.op, Reason: ReasonInputsChanged}
			got := Stopped(d, tc.o, uid, Timing{})
			want := Decision{Action: ActionWait, Op: tc.op, Reason: tc.reason, Requeue: tc.requeue}
			if got != want {
				t.Errorf("Stopped = %+v, want %+v", got, want)
			}
			if tc.o.Announced() != tc.announced {
				t.Errorf("Announced = %v, want %v", tc.o.Announced(), tc.announced)
			}
		})
	}
	// An evacuation's hold concerns the destroy, even before anything is
	// decided (a copy back that cannot be made).
	if got := Stopped(Decision{}, ObstacleEvacuationHeld, uid, Timing{}); got.Op != OpDestroy || got.Reason != ReasonNamespaceTerminating {
		t.Errorf("an evacuation held before deciding: %+v, want a destroy's NamespaceTerminating wait", got)
	}
}

// TestStoppedTiming: a manager that shortens the look-again intervals
// (tests do) gets them on the waits a Job meets as it starts; a slot's
// jitter scales with its interval.
func TestStoppedTiming(t *testing.T) {
	const uid = "6f1c2d9e-0000-4000-8000-000000000001"
	short := Timing{Gate: time.Second, Policy: 2 * time.Second, Slot: 3 * time.Second}
	d := Decision{Action: ActionStartJob, Op: OpApply, Reason: ReasonInputsChanged}
	for o, want := range map[Obstacle]time.Duration{
		ObstacleRunLeaseBusy: time.Second,
		ObstacleJobRefused:   2 * time.Second,
		ObstacleNoJobSlot:    3*time.Second + Jitter(uid, 3*time.Second),
	} {
		if got := Stopped(d, o, uid, short).Requeue; got != want {
			t.Errorf("%s: looks again after %s, want %s", o, got, want)
		}
	}
}
