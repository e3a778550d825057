package workspace

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/guard"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/runnerrbac"
	"captf.io/captf/pkg/state"
)

// pass is one reconcile of one object: what it observed and decided, and
// what it will write.
type pass struct {
	e      *Engine
	role   roles.Role
	obj    client.Object
	w      roles.Workload
	before client.Object
	now    time.Time
	// read is the resourceVersion the pass read its object at.
	read string
	// ownerLive: the owner was read (or confirmed) live this pass;
	// ownerMoved: a write found that the cached owner it read was not the
	// API server's, and the pass is void (owner.go).
	ownerLive, ownerMoved bool
	// armedEvents counts the events of the pass before its gate;
	// pastGate: the pass went past it.
	armedEvents int
	pastGate    bool
	// emitted are the events the void pass before this one emitted: this
	// one does not emit them again (emit).
	emitted []conditions.Event
	// waitEvents index the wait events among events (waitEvent).
	waitEvents []int

	owner roles.Owner
	eff   roles.Effective
	creds credentials.Resolved

	jobs   []batchv1.Job
	active *batchv1.Job
	// running is what checkActive found of the running Job, for the
	// chores. choresDone: the pass did its chores (or tried).
	running    running
	choresDone bool
	// confirmedJob is the unconfirmed apply the user confirmed created
	// nothing, for the chore ConfirmNoResources.
	confirmedJob string
	// plans are the object's TerraformPlans, newest first, as the pass
	// moved them (movePlans); planMoves are the moves to write (the chore
	// SyncPlans).
	plans     []infrav1.TerraformPlan
	planMoves []guard.Move
	// books is the chore Bookkeep's: the outcomes it takes and the Jobs it
	// recorded.
	books books
	// decided is the pass's decision, once made.
	decided *decide.Decision
	// stored is the object's state as the pass read it.
	stored stored

	inputs built

	contract    roles.Contract
	specChanged bool
	// rbac is the runner RBAC the credentials step read.
	rbac runnerRBAC
	// dependentNames name a deleting cluster's machines and pools,
	// machines first (countDependents).
	dependentNames []string
	released       bool
	// soonest, when set, is how soon a wait must look again at the latest
	// (a deadline the decision's own requeue does not know of).
	soonest     time.Duration
	forceUnlock string
	// nsTerminating: the namespace of a deleting object is being deleted.
	nsTerminating bool
	// vanished is the Job status.activeJob named, found gone before it
	// was bookkept (observeJobs).
	vanished vanished
	// evac is the object's evacuation, when its namespace is being
	// deleted.
	evac evacuated

	conds []metav1.Condition
	// ran are the steps that own condition types the pass ran
	// (conditions.Owner): a type one of them owns and the pass did not
	// say goes, once the pass completed.
	ran []conditions.Step
	// dropped are the condition types the pass removes (endLiveReports).
	dropped []string
	events  []conditions.Event
	// observations record metrics once the status patch succeeded.
	observations []func()
}

// stored is the object's state as the pass read it (observeState), with
// what the steps after it found of it: a restore request's backup
// (restoreRequest) and the backup Secrets (restoreRequest, and the chores
// BackUpState and ReownBackups, which read them again).
type stored struct {
	// secrets are the state Secrets; data: they carry their data (else
	// only their metadata: the state did not change since its last
	// decode).
	secrets []corev1.Secret
	data    bool
	// surplus are the protected state pieces Terraform deleted, left out
	// of secrets (setAsideSurplus).
	surplus []corev1.Secret
	// state is the state decoded (nil: none, or err says why it could
	// not be read).
	state *state.State
	err   error
	// retained: the state belongs to a deleted object of the same name.
	retained bool
	// restore is the backup a restore request names (nil: none due);
	// backups are the object's backup Secrets as last read.
	restore *state.Backup
	backups []corev1.Secret
}

// running is what checkActive found of the running Job, for the chores.
type running struct {
	// stuck is the Job found stuck (no longer active), for the chore
	// DeleteStuckJob.
	stuck *batchv1.Job
	// unpulled is the Job given up on for its image, for the chore
	// StopUnpulledJob; fallback the one given up on with another image
	// left, for the chore FallBackImage.
	unpulled *unpulled
	fallback *fallback
}

// books are the chore Bookkeep's.
type books struct {
	// outcomes are the finished Jobs not bookkept yet, as read, until the
	// chore takes them; bookkept the Jobs it recorded.
	outcomes []jobs.Outcome
	bookkept []*batchv1.Job
	// newSample: a succeeded apply, refresh or drift Job was bookkept this
	// pass, so the state's health output is a new reading.
	newSample bool
}

// runnerRBAC is the runner's ServiceAccount and RoleBinding as the
// credentials step read them: ready, or due to be written.
type runnerRBAC struct {
	binding runnerrbac.Binding
	ready   bool
}

// vanished is the Job status.activeJob named, found gone before it was
// bookkept.
type vanished struct {
	job *infrav1.ActiveJob
	// podsDone: every pod of it finished, so its run lease can go at once.
	podsDone bool
}

// evacuated is the object's evacuation namespace (internal/evacuation).
type evacuated struct {
	// ns is the namespace, once found or made.
	ns *corev1.Namespace
	// copyBack: an evacuated Job left its state to copy back; ending: the
	// namespace is being deleted (observeEvacuation).
	copyBack, ending bool
}

// stepRan notes that the pass ran step s, which says the condition types
// it owns (conditions.Owner).
func (p *pass) stepRan(s conditions.Step) { p.ran = append(p.ran, s) }

// observe queues a metrics observation for after the status patch.
func (p *pass) observe(f func()) { p.observations = append(p.observations, f) }
