package workspace

import (
	"time"

	"captf.io/captf/internal/decide"
)

// Options are the manager settings the lifecycle uses.
type Options struct {
	// RunnerImage is the image of the Jobs' init container that copies the
	// runner.
	RunnerImage string
	// WatchFilter, when set, is this manager's shard (--watch-filter): a
	// pass acts only on an object labelled cluster.x-k8s.io/watch-filter
	// with that value, and sweeps only the Jobs labelled so.
	WatchFilter string
	// DriftDefault is --drift-default-interval.
	DriftDefault time.Duration
	// RunnerEvents passes the event flags to the runner (--runner-events).
	RunnerEvents bool
	// ClusterOperationGate keeps a cluster's apply, destroy and restore
	// from overlapping its machines' and pools' (--cluster-operation-gate).
	ClusterOperationGate bool
	// StateBackups is how many backup sets are kept per object
	// (--state-backups); 0 takes none.
	StateBackups int
	// MaxActiveJobs caps the running Jobs of the manager, and
	// ClusterMaxActiveJobs those of one cluster (its TerraformCluster,
	// machines and pools) unless its spec.maxActiveJobs says otherwise; 0
	// means no cap.
	MaxActiveJobs, ClusterMaxActiveJobs int
	// ImagePullGrace is how long a pod may fail to pull its module image
	// before its Job is stopped or falls back to the next image
	// (ImagePullGrace when 0). No flag sets it; tests shorten it.
	ImagePullGrace time.Duration
	// HolderGrace and HolderLeaseDuration replace, when set, the two parts
	// of how long the holder of a run lease or state lock whose pod is gone
	// is waited out before its lease is taken over or its lock
	// force-unlocked: the pod's termination grace (its Job's pod template,
	// 600 s when the Job is gone) and the lease duration (the lease's
	// leaseDurationSeconds, the backstop). No flag sets them; tests
	// shorten them.
	HolderGrace, HolderLeaseDuration time.Duration
	// Timing holds the decision table's backoff base and look-again
	// intervals (decide.Timing: each the documented default when 0). No
	// flag sets them; tests shorten them.
	Timing decide.Timing
	// StuckJobAge is how old a Job whose pod never started must be before
	// a missing per-run Secret makes it stuck (StuckJobAge when 0). No
	// flag sets it; tests shorten it.
	StuckJobAge time.Duration
	// StrictConditions makes a pass panic, rather than log, when a step it
	// ran did not say a condition it owns (conditions.Unsaid). No flag
	// sets it; the lifecycle suite does, with CrashOnPanic.
	StrictConditions bool
	// Evacuation lets a deleting object's destroy run in its evacuation
	// namespace when its own namespace is being deleted (package
	// evacuation). The manager sets it when it watches every namespace.
	Evacuation bool
}

// timing is the effective Options.Timing.
func (o Options) timing() decide.Timing { return o.Timing.Effective() }

// stuckJobAge is the effective Options.StuckJobAge.
func (o Options) stuckJobAge() time.Duration {
	if o.StuckJobAge > 0 {
		return o.StuckJobAge
	}
	return StuckJobAge
}

// imagePullGrace is the effective Options.ImagePullGrace.
func (o Options) imagePullGrace() time.Duration {
	if o.ImagePullGrace > 0 {
		return o.ImagePullGrace
	}
	return ImagePullGrace
}
