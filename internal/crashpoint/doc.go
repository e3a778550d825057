// Package crashpoint names the moments inside a lifecycle pass where the
// crash soak (`make soak`) kills the manager: between two writes that a
// crash must never leave half done, such as the attempt record and the
// Job create, or the status patch and marking a Job bookkept.
//
// In the shipped manager Hit does nothing and is inlined away: the
// killing implementation exists only in a build with the captfsoak tag,
// which only the soak makes. There, each Hit kills the process with
// SIGKILL with the probability in CAPTF_CRASH_PROBABILITY (0 when unset),
// after printing "crash point <name>" on stderr.
package crashpoint

// The named points, in the order a pass reaches them.
const (
	// AfterRunLease: the run lease is taken, the Job not created.
	AfterRunLease = "after-run-lease"
	// AfterAttemptRecord: the attempt record is written, the Job not created.
	AfterAttemptRecord = "after-attempt-record"
	// AfterJobCreate: the Job exists, the status does not say so yet.
	AfterJobCreate = "after-job-create"
	// AfterOutcomeRecorded: a finished Job's outcome is recorded (applied
	// record, adoption), the status not patched yet.
	AfterOutcomeRecorded = "after-outcome-recorded"
	// AfterStatusPatch: the status is patched, the Jobs read this pass not
	// marked bookkept yet.
	AfterStatusPatch = "after-status-patch"
	// AfterBackup: a state backup set is written, not pruned or listed yet.
	AfterBackup = "after-backup"
	// DuringCleanup: the state Secrets are deleted, the lock, records,
	// plan key, leases and mirror not yet.
	DuringCleanup = "during-cleanup"
	// BeforeFinalizerRemoval: cleanup is done, the finalizer still on.
	BeforeFinalizerRemoval = "before-finalizer-removal"
)

// Points lists every named point.
var Points = []string{AfterRunLease, AfterAttemptRecord, AfterJobCreate, AfterOutcomeRecorded,
	AfterStatusPatch, AfterBackup, DuringCleanup, BeforeFinalizerRemoval}

// EnvProbability names the environment variable holding the probability,
// from 0 to 1, that a Hit kills the soak's manager.
const EnvProbability = "CAPTF_CRASH_PROBABILITY"

// Hit marks the point name: in the soak's build it may kill the process.
func Hit(name string) { hit(name) }
