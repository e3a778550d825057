package decide

import "time"

// Obstacle is what a Job the table decided meets as it starts: what only
// starting it can tell, because each is taken, not only read (a Job slot,
// the run lease, the cluster operation gate), or read for the Job's own
// run (the credentials of the identity recorded with its durable inputs,
// the runtime of a new image, the pod of an evacuated destroy's own
// namespace), or the API server's answer to the Job.
type Obstacle string

// Obstacles, in the order a Job's start meets them.
const (
	// ObstacleCredentials: the identity the Job runs with (recorded with
	// its inputs, or a deleting object's) does not let it run yet.
	ObstacleCredentials Obstacle = "Credentials"
	// ObstacleRuntimeRefused: the new image's runtime cannot keep the state
	// the old one wrote; ObstacleRuntimeUnknown: whether it can cannot be
	// told yet (its image not inspected).
	ObstacleRuntimeRefused Obstacle = "RuntimeRefused"
	ObstacleRuntimeUnknown Obstacle = "RuntimeUnknown"
	// ObstacleHomePodRuns: an evacuated destroy waits for the Job pod
	// still running in the object's own namespace (it holds the state).
	ObstacleHomePodRuns Obstacle = "HomePodRuns"
	// ObstacleNoJobSlot: the manager's or the cluster's Jobs are at their
	// limit.
	ObstacleNoJobSlot Obstacle = "NoJobSlot"
	// ObstacleRunLeaseBusy: another holder keeps the object's run lease
	// (or, for a cluster operation, the cluster's lease).
	ObstacleRunLeaseBusy Obstacle = "RunLeaseBusy"
	// ObstacleClusterOperation: the cluster's own Job runs (the cluster
	// operation gate); ObstacleMachineOperations: the cluster's machines'
	// and pools' Jobs run, and the cluster's operation waits for them.
	ObstacleClusterOperation  Obstacle = "ClusterOperation"
	ObstacleMachineOperations Obstacle = "MachineOperations"
	// ObstacleJobRefused: the API server refused the Job itself (invalid,
	// forbidden, too large): only a change makes it valid.
	ObstacleJobRefused Obstacle = "JobRefused"
	// ObstacleEvacuationHeld: the destroy of an object whose namespace is
	// being deleted cannot run in its evacuation namespace either (what it
	// needs is gone, or cannot be copied there); also the hold of a copy
	// back that cannot be made, before anything is decided.
	ObstacleEvacuationHeld Obstacle = "EvacuationHeld"
)

// Reasons of the waits a Job meets as it starts (Stopped).
const (
	ReasonIdentityNotAllowed         Reason = "IdentityNotAllowed"
	ReasonRuntimeCannotKeepState     Reason = "RuntimeCannotKeepState"
	ReasonRuntimeNotKnown            Reason = "RuntimeNotKnown"
	ReasonWaitingForRunLease         Reason = "WaitingForRunLease"
	ReasonWaitingForJobSlot          Reason = "WaitingForJobSlot"
	ReasonWaitingForClusterOperation Reason = "WaitingForClusterOperation"
	ReasonWaitingForMachineOps       Reason = "WaitingForMachineOperations"
	ReasonJobRefused                 Reason = "JobRefused"
)

// SlotRequeue is how soon a Job waiting for a slot looks again, plus up to
// 10% from the object's UID: the waiters of one freed slot do not all
// look at once (a Job that finishes wakes some of them sooner).
const SlotRequeue = 15 * time.Second

// Stopped is the wait of d, a Job the table decided, that o stops as it
// starts; uid is the object's, for the jitter of a slot's wait. The wait
// keeps d's operation. What a change fixes (a runtime that cannot keep
// the state, a Job the API server refuses) looks again after t's Policy;
// a Job slot after its Slot and jitter; the rest, gates that free by
// themselves, after its Gate (t's zero fields are the defaults).
func Stopped(d Decision, o Obstacle, uid string, t Timing) Decision {
	t = t.Effective()
	w := Decision{Action: ActionWait, Op: d.Op, Requeue: t.Gate, Evacuate: d.Evacuate}
	switch o {
	case ObstacleCredentials:
		w.Reason = ReasonIdentityNotAllowed
	case ObstacleRuntimeRefused:
		w.Reason, w.Requeue = ReasonRuntimeCannotKeepState, t.Policy
	case ObstacleRuntimeUnknown:
		w.Reason = ReasonRuntimeNotKnown
	case ObstacleHomePodRuns, ObstacleRunLeaseBusy:
		w.Reason = ReasonWaitingForRunLease
	case ObstacleNoJobSlot:
		w.Reason, w.Requeue = ReasonWaitingForJobSlot, t.Slot+Jitter(uid, t.Slot)
	case ObstacleClusterOperation:
		w.Reason = ReasonWaitingForClusterOperation
	case ObstacleMachineOperations:
		w.Reason = ReasonWaitingForMachineOps
	case ObstacleJobRefused:
		w.Reason, w.Requeue = ReasonJobRefused, t.Policy
	case ObstacleEvacuationHeld:
		// Only a destroy is evacuated.
		w.Op, w.Reason = OpDestroy, ReasonNamespaceTerminating
	}
	return w
}

// Announced says whether the wait o starts is announced by an event (once
// per wait): a gate's, whose holder the user may want to know of.
func (o Obstacle) Announced() bool {
	switch o {
	case ObstacleNoJobSlot, ObstacleRunLeaseBusy, ObstacleClusterOperation, ObstacleMachineOperations:
		return true
	}
	return false
}
