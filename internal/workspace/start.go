package workspace

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/crashpoint"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/evacuation"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/runs"
	"captf.io/captf/pkg/state"
)

// stopped reports the wait of d, the Job o stops as it starts
// (decide.Stopped), on the operation's condition with msg; a gate's wait
// is announced by an event too, once per wait.
func (p *pass) stopped(d decide.Decision, o decide.Obstacle, msg string) (ctrl.Result, error) {
	w := decide.Stopped(d, o, string(p.obj.GetUID()), p.e.Options.Timing)
	for _, c := range conditions.Wait(w, conditions.WaitFacts{Message: msg}) {
		if o.Announced() {
			p.waitEvent(c.Reason, msg)
		}
		p.report(c)
	}
	return ctrl.Result{RequeueAfter: w.Requeue}, nil
}

// runInputs are the files, hash and image of one run.
type runInputs struct {
	mainTF, tfvars []byte
	hash, image    string
	// fallbacks are the images a non-apply Job tries next when its own
	// cannot be pulled; digestUnknown: no digest could be pinned.
	fallbacks     []string
	digestUnknown bool
	identity      string
	identityKind  infrav1.IdentityKind
}

// inputsFor picks what the Job of op renders and runs; false when
// nothing can render it (Decide holds such a Job: InputsUnavailable,
// DurableInputsMissing).
func (p *pass) inputsFor(op decide.Operation) (runInputs, bool) {
	if op == decide.OpRestore {
		ri := runInputs{mainTF: restoreRoot, tfvars: restoreTfvars, hash: p.keyed(p.stored.restore.InputsHash), identity: p.creds.Identity, identityKind: p.creds.Kind}
		p.pickImage(&ri, p.inputs.applied)
		return ri, true
	}
	if op == decide.OpApply || op == decide.OpPlan {
		if p.inputs.hash == "" {
			return runInputs{}, false
		}
		return runInputs{mainTF: p.inputs.mainTF, tfvars: p.inputs.tfvars, hash: p.inputs.hash, image: p.w.Source.Image,
			identity: p.creds.Identity, identityKind: p.creds.Kind}, true
	}
	rec, mismatch := p.recordFor(op)
	if rec == nil {
		return runInputs{}, false
	}
	if mismatch {
		p.eventf(corev1.EventTypeWarning, "DestroyInputsMismatch", "The %s renders the inputs of Job %s (inputs hash %s), which differ from the state's (%s)",
			op, rec.Job, rec.InputsHash, p.stateInputsHash())
	}
	ri := runInputs{mainTF: rec.MainTF, tfvars: rec.Tfvars, hash: rec.InputsHash, identity: rec.Identity, identityKind: rec.IdentityKind}
	p.pickImage(&ri, rec)
	if ri.identity == "" {
		ri.identity, ri.identityKind = p.creds.Identity, p.creds.Kind
	}
	return ri, true
}

// startJob starts the Job of d: what stops a Job as it starts (the
// credentials of the identity it runs as, admit, takeLeases), then the
// Job itself (launch). Each check that stops it says the wait on the
// operation's condition (halt).
func (p *pass) startJob(ctx context.Context, d decide.Decision, deleting bool) (ctrl.Result, error) {
	if d.Evacuate {
		if msg, err := p.prepareEvacuation(ctx); err != nil || msg != "" {
			return p.halt(d, decide.ObstacleEvacuationHeld, msg, err)
		}
	}
	in, ok := p.inputsFor(d.Op)
	if !ok {
		return ctrl.Result{}, fmt.Errorf("nothing renders the %s decided", d.Op)
	}
	// A run that renders recorded inputs uses the identity recorded with
	// them; a deleting object checks its credentials only now.
	if deleting || p.otherIdentity(in.identity, in.identityKind) {
		if o, msg, err := p.credentialsAtStart(ctx, d.Op, in); err != nil || o != "" {
			return p.halt(d, o, msg, err)
		}
	}
	if !p.creds.Ready || !p.rbac.ready {
		// The runner RBAC of the identity checked just above (a live
		// object's own credentials are an admission row of Decide).
		return ctrl.Result{RequeueAfter: p.e.Options.timing().Gate}, nil
	}
	if o, msg, err := p.admit(ctx, d.Op, in); err != nil || o != "" {
		return p.halt(d, o, msg, err)
	}
	attempt := jobs.NextAttempt(p.jobs, d.Op)
	name := jobs.Name(state.KindShort(p.role.Kind()), p.obj.GetName(), string(d.Op), attempt, jobs.Hash6(in.hash, string(d.Op), attempt, p.ticks().Tick(d.Op, d.Reason == decide.ReasonDriftRemediation)))
	if o, msg, err := p.takeLeases(ctx, d.Op, name); err != nil || o != "" {
		return p.halt(d, o, msg, err)
	}
	return p.launch(ctx, d, in, name, attempt, deleting)
}

// halt ends a start that failed (err) or that o stops, msg saying why.
func (p *pass) halt(d decide.Decision, o decide.Obstacle, msg string, err error) (ctrl.Result, error) {
	if err != nil {
		return ctrl.Result{}, err
	}
	return p.stopped(d, o, msg)
}

// credentialsAtStart reads and prepares the credentials of the identity
// in runs as (mirror, runner RBAC); an obstacle when they are not ready.
func (p *pass) credentialsAtStart(ctx context.Context, op decide.Operation, in runInputs) (decide.Obstacle, string, error) {
	if err := p.credentialsFor(ctx, in.identity, in.identityKind); err != nil {
		return "", "", err
	}
	if err := p.mirrorCredentials(ctx); err != nil {
		return "", "", err
	}
	if err := p.bindRunner(ctx); err != nil {
		return "", "", err
	}
	switch {
	case !p.creds.Ready && p.evac.ns != nil:
		return decide.ObstacleEvacuationHeld, fmt.Sprintf("The destroy's credentials are not available (%s), and namespace %s, being deleted, takes no new Secret. ",
			firstMessage(p.creds.Conditions), p.obj.GetNamespace()) + p.namespaceTerminatingMessage(decide.OpDestroy), nil
	case !p.creds.Ready:
		return decide.ObstacleCredentials, fmt.Sprintf("The %s Job waits for its credentials: %s", op, firstMessage(p.creds.Conditions)), nil
	}
	return "", "", nil
}

// admit checks, in order, what else stops the Job of op rendering in as
// it starts: the runtime's limits on the state, an evacuated destroy's
// pod still running at home and the Secrets it needs, and a Job slot.
func (p *pass) admit(ctx context.Context, op decide.Operation, in runInputs) (decide.Obstacle, string, error) {
	if o, msg, err := p.runtimeRefusal(ctx, op, in.image); err != nil || o != "" {
		return o, msg, err
	}
	if p.evac.ns != nil {
		if why, err := evacuation.HomePodRuns(ctx, p.e.APIReader, p.obj.GetNamespace(), p.jobSelector()); err != nil || why != "" {
			return decide.ObstacleHomePodRuns, why, err
		}
		if msg, err := p.evacuatedSecrets(ctx); err != nil || msg != "" {
			return decide.ObstacleEvacuationHeld, msg, err
		}
	}
	why, err := p.e.gates().Slot(ctx, p.subject(), op)
	if err != nil || why == "" {
		return "", "", err
	}
	return decide.ObstacleNoJobSlot, why, nil
}

// takeLeases takes the run lease for the Job name of op, then passes the
// cluster operation gate.
func (p *pass) takeLeases(ctx context.Context, op decide.Operation, name string) (decide.Obstacle, string, error) {
	ok, why, err := p.e.gates().AcquireRun(ctx, p.subject(), name, op, p.now)
	if err != nil || !ok {
		return decide.ObstacleRunLeaseBusy, why, err
	}
	crashpoint.Hit(crashpoint.AfterRunLease)
	return p.e.gates().ClusterGate(ctx, p.subject(), name, op, p.now)
}

// launch makes the Job of d, named name (attempt attempt), rendering in:
// its spec, the block-move annotation, an evacuated state copy, the
// attempt record (apply), then the Job and its per-run Secret. A Job the
// API server refuses releases the run lease and waits.
func (p *pass) launch(ctx context.Context, d decide.Decision, in runInputs, name string, attempt int, deleting bool) (ctrl.Result, error) {
	op := d.Op
	spec, err := p.jobSpec(ctx, d, in, name, attempt, deleting)
	if err != nil {
		return ctrl.Result{}, err
	}
	job, secret, err := jobs.Build(spec)
	if err != nil {
		return ctrl.Result{}, err
	}
	secret.Data = map[string][]byte{records.MainFile: in.mainTF, records.TfvarsFile: in.tfvars}
	if err := p.setBlockMove(ctx); err != nil {
		return ctrl.Result{}, err
	}
	if p.evac.ns != nil {
		if err := evacuation.Evacuate(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace(), p.evac.ns, p.suffix()); err != nil {
			return ctrl.Result{}, err
		}
	}
	// The attempt record is written first: whatever becomes of the Job
	// (it vanishes, it is killed), its inputs are known. A record holding
	// an earlier Job's possible partial apply is kept (records.WriteAttempt):
	// this Job's create may still be refused, or it may fail before
	// applying; its inputs are in its per-run Secret meanwhile.
	if op == decide.OpApply {
		rec := records.Record{Job: name, Image: in.image, Identity: in.identity, IdentityKind: in.identityKind,
			InputsHash: in.hash, MainTF: in.mainTF, Tfvars: in.tfvars}
		if err := records.WriteAttempt(ctx, p.e.client(), p.e.APIReader, p.obj, p.role.Kind(), rec); err != nil {
			return ctrl.Result{}, fmt.Errorf("writing the attempt record: %w", err)
		}
		crashpoint.Hit(crashpoint.AfterAttemptRecord)
	}
	if err := p.createJob(ctx, job, secret); err != nil {
		why, refused := runs.Refused(err, name, secret.Name)
		if !refused {
			return ctrl.Result{}, err
		}
		// A refused per-run Secret leaves the Job made, its pod unable to
		// start: it is found stuck (DeleteStuckJob) once StuckJobAge is
		// over, and the next one starts then.
		_ = p.releaseRunLease(ctx, name)
		p.eventf(corev1.EventTypeWarning, "JobFailed", "%s", why)
		return p.stopped(d, decide.ObstacleJobRefused, why)
	}
	crashpoint.Hit(crashpoint.AfterJobCreate)
	p.jobStarted(ctx, d, job, attempt, in)
	return ctrl.Result{RequeueAfter: p.e.Options.timing().ActiveJob}, nil
}

// jobSpec is the Job of d, named name (attempt attempt), running in: what
// it runs and where, how it is guarded (the plan key made first when it
// is), and the marks it carries for later passes.
func (p *pass) jobSpec(ctx context.Context, d decide.Decision, in runInputs, name string, attempt int, deleting bool) (jobs.Spec, error) {
	op := d.Op
	policy := p.eff.Policy
	policy.ServiceAccountName = p.runnerAccount()
	spec := jobs.Spec{
		Kind: p.role.Kind(), ObjectName: p.obj.GetName(), Namespace: p.obj.GetNamespace(), UID: p.obj.GetUID(), Unowned: deleting,
		WatchFilter: p.obj.GetLabels()[infrav1.WatchFilterLabel],
		ClusterName: p.owner.ClusterName, Op: infrav1.Operation(op), Attempt: attempt, Name: name,
		Image: in.image, PullPolicy: p.w.Source.ImagePullPolicy, RunnerImage: p.e.Options.RunnerImage, Policy: policy,
		Identity: in.identity, IdentityKind: in.identityKind, CredentialsSecret: p.creds.Secret,
		InputsHash: in.hash, RunnerEvents: p.e.Options.RunnerEvents, ForceUnlock: p.forceUnlock,
	}
	if op != decide.OpApply && op != decide.OpPlan && op != decide.OpRestore {
		spec.InputsHash = ""
	}
	if p.evac.ns != nil {
		spec.RunNamespace = p.evac.ns.Name
	}
	if op == decide.OpRestore {
		spec.Restore = &jobs.Restore{Chunks: p.stored.restore.Chunks, Resources: p.stored.restore.Resources,
			Serial: p.stored.restore.Serial, InputsHash: p.keyed(p.stored.restore.InputsHash)}
	}
	g := p.guard()
	exportsGuard := op == decide.OpApply && g.ExportsGuarded()
	if ((op == decide.OpApply || op == decide.OpPlan) && p.guarded()) || exportsGuard {
		var err error
		if spec.PlanKeySecret, err = p.ensurePlanKey(ctx); err != nil {
			return spec, err
		}
		g = p.guard() // as keyed now
	}
	var approved *infrav1.TerraformPlan
	spec.Guard, approved = g.JobGuard(op, in.hash, p.guarded(), exportsGuard, p.history)
	if op == decide.OpApply && p.caps().GuardsExports {
		spec.Marks.Exports = &jobs.Exports{Applied: p.inputs.exports, Approval: p.inputs.approval}
	}
	if approved != nil {
		spec.Marks.ApprovedPlan = &jobs.ApprovedPlan{Name: approved.Name, PlanHash: approved.Spec.PlanHash}
	}
	spec.Marks.Fallbacks = in.fallbacks
	spec.Marks.DriftRemediation = d.Reason == decide.ReasonDriftRemediation
	if op == decide.OpApply {
		spec.Marks.AfterInterruptedApply = p.unconfirmed()
	}
	return spec, nil
}

// jobStarted says that job, attempt attempt of d running in, started: the
// leases now name a Job that ran, status.activeJob names it, and its
// events and conditions go out.
func (p *pass) jobStarted(ctx context.Context, d decide.Decision, job *batchv1.Job, attempt int, in runInputs) {
	op, name := d.Op, job.Name
	p.waitOver()
	// From now on the leases' holder is a Job that ran, should it vanish.
	p.markLeasesCreated(ctx, name, op)
	if p.forceUnlock != "" {
		ctrl.LoggerFrom(ctx).Info("Handing a stale state lock to the next Job to force-unlock", "lock", p.forceUnlock, "job", name)
		metrics.ForceUnlocks.WithLabelValues(p.role.Kind()).Inc()
		p.eventf(corev1.EventTypeWarning, "ForceUnlocked", "The state lock %s left by a finished Job of this object is force-unlocked by Job %s", p.forceUnlock, name)
	}
	// The Job's own creation time, as every later pass reads it
	// (observeJobs): the next pass then finds nothing to write.
	started := job.CreationTimestamp
	if started.IsZero() {
		started = metav1.NewTime(p.now)
	}
	p.w.Status.ActiveJob = &infrav1.ActiveJob{Name: name, Operation: infrav1.Operation(op), Attempt: int32(attempt), StartTime: &started}
	p.eventf(corev1.EventTypeNormal, "JobCreated", "Created Job %s: %s attempt %d of image %s (%s)", name, op, attempt, in.image, d.Reason)
	if in.digestUnknown {
		p.eventf(corev1.EventTypeWarning, "DigestUnknown", "No image digest is pinned for the %s Job %s: it runs %s, which may have moved since the last apply", op, name, in.image)
	}
	if d.Reason == decide.ReasonDriftRemediation {
		p.remediationStarted(name)
	}
	if d.Reason == decide.ReasonInputsChanged {
		metrics.ObserveInputsHashChange(p.role.Kind())
		p.eventf(corev1.EventTypeNormal, "InputsChanged", "The inputs changed (%s, state has %s): Job %s applies them", in.hash, p.stateInputsHash(), name)
	}
	prov := p.w.Status.Initialization.Provisioned
	for _, c := range conditions.JobStarted(name, op, d.Reason == decide.ReasonNoState && (prov == nil || !*prov)) {
		p.report(c)
	}
}

func firstMessage(conds []metav1.Condition) string {
	for _, c := range conds {
		if c.Status != metav1.ConditionTrue {
			return c.Message
		}
	}
	return ""
}

// createJob creates the Job and its per-run Secret (runs.Keeper.Create).
// The pass reports the Job it creates (status.activeJob): the Job's
// creation wakes no other pass. A Job this call did not create (one of
// the name adopted, or its create refused) is forgotten once the Secret's
// writes are done: an event of it, were one to come meanwhile, brings
// nothing the pass does not report.
func (p *pass) createJob(ctx context.Context, job *batchv1.Job, secret *corev1.Secret) error {
	p.e.ExpectJobCreate(job)
	created, err := p.e.runs().Create(ctx, job, secret)
	if !created {
		p.e.ForgetJobEcho(job)
	}
	return err
}

// pickImage sets the image of a non-apply Job rendering rec.
func (p *pass) pickImage(ri *runInputs, rec *records.Record) {
	var unpullable []string
	if p.inputs.attempt != nil {
		unpullable = p.inputs.attempt.UnpullableImages
	}
	c := jobs.ChooseImage(ranImage(rec), ranImage(p.inputs.applied), p.w.Source.Image, unpullable)
	ri.image, ri.fallbacks, ri.digestUnknown = c.Image, c.Fallbacks, c.DigestUnknown
}

// ranImage is the image rec says its run ran (nil without a record).
func ranImage(rec *records.Record) *jobs.RanImage {
	if rec == nil {
		return nil
	}
	return &jobs.RanImage{Image: rec.Image, ImageID: rec.ImageDigest}
}

// ticks are what tells the object's runs of the same inputs apart.
func (p *pass) ticks() jobs.Ticks {
	t := jobs.Ticks{LastRefresh: p.w.Status.LastRefresh, LastDriftCheck: p.w.Status.LastDriftCheck}
	if p.stored.restore != nil {
		t.Restore = p.stored.restore.Name
	}
	return t
}
