package jobs

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// Spec is everything Build needs to know about one run. The manager's
// decide step fills it; Build only shapes it into objects.
type Spec struct {
	// Kind is the workload kind: TerraformCluster, TerraformMachine or
	// TerraformMachinePool.
	Kind string
	// WatchFilter is the object's cluster.x-k8s.io/watch-filter label, if
	// any: the Job carries it, so that it stays in the manager's shard.
	WatchFilter string
	// ObjectName, Namespace and UID identify the object; the Job is
	// created in Namespace and owned by the object, unless Unowned.
	ObjectName string
	Namespace  string
	UID        types.UID
	// Unowned leaves out the owner reference: the object is being deleted,
	// and the garbage collector would stop a Job it owns (and its pods)
	// under foreground propagation. The Job's captf.io/owner-uid and
	// captf.io/owner annotations still tie it to the object; the object's
	// cleanup deletes it.
	Unowned bool
	// RunNamespace, when set, is where the Job, its pod and its per-run
	// Secret are created and where the backend finds the state, instead of
	// Namespace: an evacuated destroy, for an object whose namespace is
	// being deleted (Kubernetes refuses new Jobs there). The state suffix
	// and the labels stay the object's; the Job must be an unowned destroy,
	// and it posts no progress events (its account may not write the
	// object's namespace).
	RunNamespace string
	// ClusterName is the owning Cluster API cluster.
	ClusterName string

	// Op is the operation and Attempt its attempt number (from 1).
	Op      infrav1.Operation
	Attempt int
	// Name is the Job's name, from Name.
	Name string

	// Image is the module image this run uses, PullPolicy its pull policy
	// (IfNotPresent when empty); RunnerImage is the manager's runner image.
	Image       string
	PullPolicy  corev1.PullPolicy
	RunnerImage string

	// Policy is the effective jobs policy, from MergePolicy.
	Policy Policy

	// StateSuffix and BackendLabels configure the kubernetes backend. When
	// empty they are derived from Kind, Namespace, ObjectName and
	// ClusterName with state.Suffix and state.OwnerLabels.
	StateSuffix   string
	BackendLabels map[string]string

	// Identity names the identity the run uses (a TerraformClusterIdentity,
	// or a Secret when IdentityKind is Secret); recorded on the per-run
	// Secret. CredentialsSecret is the Secret delivered to the pod (the
	// mirror captf-creds-<identity>, or the local Secret); "" for none.
	Identity          string
	IdentityKind      infrav1.IdentityKind
	CredentialsSecret string

	// PlanKeySecret is the object's plan key Secret, mounted at
	// /captf/plan-key. Plan Jobs and guarded or approved applies need it;
	// other runs must leave it empty.
	PlanKeySecret string

	// ForceUnlock is a stale state lock ID to clear after init.
	ForceUnlock string
	// Guard holds the apply guard and approval flags.
	Guard Guard
	// Restore lists the backup to restore; required for restore only.
	Restore *Restore

	// InputsHash is the keyed h3: hash of the inputs the Job runs with. It
	// annotates apply and plan Jobs (which need it) and the per-run Secret
	// of an apply, plan or restore; a restore Job is annotated with the
	// backup's (Restore.InputsHash).
	InputsHash string

	// RunnerEvents passes --event-object and --job-name so that the
	// runner posts progress events (manager flag --runner-events).
	RunnerEvents bool

	// Marks are what the Job's annotations tell the manager's later
	// passes of this run.
	Marks Marks
}

// Marks are what a run's Job carries, in its annotations, for the passes
// that read it later (its outcome, the evidence of an interrupted apply,
// the plans, the image fallbacks).
type Marks struct {
	// Exports: a pool's apply, with the cluster exports hash it renders
	// and its approval hash (nil for any other run).
	Exports *Exports
	// ApprovedPlan: an apply approved by this TerraformPlan (nil: none).
	ApprovedPlan *ApprovedPlan
	// Fallbacks are the images left to try, in order, should the pod
	// fail to pull Image.
	Fallbacks []string
	// DriftRemediation: an apply that remediates the drift found (or, for
	// an object whose applies are Manual, the plan of one).
	DriftRemediation bool
	// AfterInterruptedApply names the apply whose outcome was unknown when
	// this apply started.
	AfterInterruptedApply string
}

// Exports are a pool apply's cluster exports hash and approval hash.
type Exports struct{ Applied, Approval string }

// ApprovedPlan is the TerraformPlan an apply was approved by: its name
// and plan hash.
type ApprovedPlan struct{ Name, PlanHash string }

// Guard holds the flags of a guarded or approved apply.
type Guard struct {
	// Deletes stops the apply before a plan that deletes or replaces.
	Deletes bool
	// InputsHash is the approval hash the guard names (--inputs-hash).
	InputsHash string
	// AllowDeletesHash is an approved hash allowing a destructive plan.
	AllowDeletesHash string
	// ExpectPlan is the approved plan hash (--expect-plan).
	ExpectPlan string
}

// JobNamespace is the namespace the Job runs in: RunNamespace, or the
// object's.
func (s Spec) JobNamespace() string {
	if s.RunNamespace != "" {
		return s.RunNamespace
	}
	return s.Namespace
}

func (g Guard) set() bool { return g != Guard{} }

// guarded reports whether an apply plans and checks the plan first, the
// runs that fingerprint a plan and need the plan key.
func (g Guard) guarded() bool { return g.Deletes || g.ExpectPlan != "" }

// Restore describes the backup a restore Job pushes.
type Restore struct {
	// Serial is the backup's serial, and InputsHash the inputs hash (keyed)
	// the backup holds: the Job's annotations.
	Serial     int64
	InputsHash string
	// Chunks are the backup's Secrets in chunk order; each one's tfstate
	// key appears as <config>/restore/<index>, from 0.
	Chunks []string
	// Resources is the backup's resource count; when not 0, the restored
	// state must list at least one resource.
	Resources int
}

func knownOp(op infrav1.Operation) bool {
	switch op {
	case infrav1.OperationApply, infrav1.OperationPlan, infrav1.OperationDestroy,
		infrav1.OperationRefresh, infrav1.OperationDrift, infrav1.OperationRestore:
		return true
	}
	return false
}

// validate returns every problem of s at once.
func (s Spec) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if state.KindShort(s.Kind) == "" {
		bad("kind %q is not a workload kind (TerraformCluster, TerraformMachine or TerraformMachinePool)", s.Kind)
	}
	if s.ObjectName == "" || s.Namespace == "" || s.UID == "" {
		bad("the object needs a name, a namespace and a UID")
	}
	if s.ClusterName == "" {
		bad("the cluster name is empty: the Job and the state are labelled with it")
	}
	if !knownOp(s.Op) {
		bad("operation %q is unknown: want apply, plan, destroy, refresh, drift or restore", s.Op)
	}
	if s.Attempt < 1 {
		bad("attempt %d is below 1", s.Attempt)
	}
	if s.RunNamespace != "" && (s.Op != infrav1.OperationDestroy || !s.Unowned) {
		bad("only an unowned destroy runs outside its object's namespace (runNamespace %q)", s.RunNamespace)
	}
	s.validateName(bad)
	if strings.TrimSpace(s.Image) == "" {
		bad("the module image is empty")
	}
	if strings.TrimSpace(s.RunnerImage) == "" {
		bad("the runner image is empty")
	}
	switch s.PullPolicy {
	case "", corev1.PullIfNotPresent, corev1.PullAlways, corev1.PullNever:
	default:
		bad("image pull policy %q is unknown: want IfNotPresent, Always or Never", s.PullPolicy)
	}
	s.validatePolicy(bad)
	if err := s.Policy.ValidateSecurity(); err != nil {
		bad("%s", err)
	}
	s.validateOpInputs(bad)
	return errors.Join(errs...)
}

func (s Spec) validateName(bad func(string, ...any)) {
	switch {
	case s.Name == "":
		bad("the Job name is empty")
	case len(s.Name) > MaxNameLength:
		bad("Job name %q has %d characters, more than %d", s.Name, len(s.Name), MaxNameLength)
	default:
		for _, msg := range validation.IsDNS1123Label(s.Name) {
			bad("Job name %q is not a DNS label: %s", s.Name, msg)
		}
	}
}

func (s Spec) validatePolicy(bad func(string, ...any)) {
	p := s.Policy
	if p.ActiveDeadlineSeconds < 1 || p.ServiceAccountName == "" || p.SecurityContext == nil || p.PodSecurityContext == nil {
		bad("the jobs policy is not resolved (no deadline, service account or security context): build it with MergePolicy")
	}
	if p.LockTimeoutSeconds < 0 {
		bad("lockTimeoutSeconds %d is negative", p.LockTimeoutSeconds)
	}
}

func (s Spec) validateOpInputs(bad func(string, ...any)) {
	apply := s.Op == infrav1.OperationApply
	if s.Guard.set() && !apply {
		bad("guard flags apply to apply Jobs only, not %s", s.Op)
	}
	if m := s.Marks; !apply && (m.Exports != nil || m.ApprovedPlan != nil || m.AfterInterruptedApply != "") {
		bad("exports, approval and interrupted apply marks apply to apply Jobs only, not %s", s.Op)
	}
	needsKey := s.Op == infrav1.OperationPlan || (apply && s.Guard.guarded())
	switch {
	case needsKey && s.PlanKeySecret == "":
		bad("a %s Job that fingerprints a plan needs the plan key Secret", s.Op)
	case !needsKey && s.PlanKeySecret != "":
		bad("the plan key is mounted only on plan Jobs and guarded or approved applies, not on this %s Job", s.Op)
	}
	if (s.Op == infrav1.OperationApply || s.Op == infrav1.OperationPlan) && s.InputsHash == "" {
		bad("a %s Job needs the inputs hash", s.Op)
	}
	if s.Op != infrav1.OperationRestore {
		if s.Restore != nil {
			bad("backup chunks are given to restore Jobs only, not %s", s.Op)
		}
		return
	}
	switch {
	case s.Restore == nil || len(s.Restore.Chunks) == 0:
		bad("a restore Job needs the backup's chunk Secrets")
	case len(s.Restore.Chunks) > state.MaxChunks:
		bad("the backup has %d chunks, more than the %d a state may have", len(s.Restore.Chunks), state.MaxChunks)
	default:
		for i, c := range s.Restore.Chunks {
			if c == "" {
				bad("backup chunk %d has no Secret name", i)
			}
		}
		if s.Restore.Resources < 0 {
			bad("the backup's resource count %d is negative", s.Restore.Resources)
		}
	}
}
