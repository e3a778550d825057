package roles

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// Workload is the view of a workload object the lifecycle works with: the
// fields all three kinds share, pointing into the object.
type Workload struct {
	Object         client.Object
	Source         infrav1.SourceSpec
	IdentityRef    *infrav1.IdentityReference
	Jobs           *infrav1.JobsSpec
	Variables      *apiextensionsv1.JSON
	VariablesFrom  []infrav1.VariablesFromSource
	DeletionPolicy infrav1.DeletionPolicy
	// DriftInterval is the object's own spec.drift.intervalSeconds (nil:
	// unset).
	DriftInterval *int32
	// AdoptRetainedState: state retained by a deleted object of the same
	// name becomes this object's.
	AdoptRetainedState bool
	// Manual: every apply waits for an approved TerraformPlan (a
	// TerraformCluster's applyPolicy Manual).
	Manual bool
	// MembershipConverging: a provisioned pool's provider ID list does not
	// match its observed replicas yet.
	MembershipConverging bool
	// PendingPlanRef points at status.pendingPlanRef of a kind that has
	// TerraformPlans (nil for the others).
	PendingPlanRef **infrav1.PlanReference
	// Status points at the object's status.
	Status *infrav1.WorkspaceStatus
}

// Owner is what the owner lookup found.
type Owner struct {
	// ClusterName names the Cluster API Cluster ("" when not known yet).
	ClusterName string
	// Cluster is the Cluster API Cluster, nil when not found.
	Cluster *clusterv1.Cluster
	// Object is the owner: the Cluster (TerraformCluster), the Machine or
	// the MachinePool. Nil without an owner reference or when it is gone.
	Object client.Object
	// Infra is the cluster's TerraformCluster for machines and pools (nil
	// when the Cluster's infrastructure is not a TerraformCluster); for a
	// TerraformCluster, itself.
	Infra *infrav1.TerraformCluster
	// NotReady is the DependenciesReady condition that stops the pass when
	// the owner is missing, does not reference the object back, or is not
	// ready; nil when the owner is fine.
	NotReady *metav1.Condition
	// Mismatch: the owner does not reference the object back. CAPTF never
	// writes to that owner and starts no Job (but deletion proceeds).
	Mismatch bool
	// Paused: the object or its Cluster is paused.
	Paused bool
	// Ownerless: the object has no owner reference of the expected kind
	// (yet).
	Ownerless bool
}

// Found reports whether the owner object was found.
func (o Owner) Found() bool { return o.Object != nil }

// Problem reports whether the lookup found something that stops or holds
// the object: a missing or mismatched owner, a pause, no TerraformCluster.
// A lookup through a cache that lags may report one that the API server no
// longer has: such a lookup is made again live before it is believed.
func (o Owner) Problem() bool {
	return o.NotReady != nil || o.Mismatch || o.Paused || o.Ownerless || o.Infra == nil
}

// Contract is what the module's outputs set on the object, computed from a
// state by Role.Outputs and written by Role.Apply.
type Contract interface {
	// Provisionable: the outputs allow latching provisioned (valid,
	// required ones known, health not pending).
	Provisionable() bool
	// HealthPending: the health reading was pending.
	HealthPending() bool
	// ProviderIDMissing: a machine that has its provider ID reads a null
	// provider_id (a pool or cluster never does).
	ProviderIDMissing() bool
	// Conditions are OutputsValid, InfrastructureHealthy and the role's
	// own (EndpointAvailable), to set on the object.
	Conditions() []metav1.Condition
}

// Role is one workload kind.
type Role interface {
	// Kind is the object's kind, e.g. TerraformMachine.
	Kind() string
	// Contract is the module contract role.
	Contract() contract.Role
	// Mutable kinds re-apply when their inputs change.
	Mutable() bool
	// Finalizer is the kind's finalizer.
	Finalizer() string
	// New returns an empty object of the kind.
	New() client.Object
	// View returns the shared fields of obj.
	View(obj client.Object) Workload
	// Owner finds and checks the object's owner, its Cluster and the
	// cluster's TerraformCluster. Reads go through r.
	Owner(ctx context.Context, r client.Reader, obj client.Object) (Owner, error)
	// Inputs gathers what the role inputs are rendered from. A nil
	// condition with a nil error means ready; a condition says why the
	// inputs cannot be built yet (DependenciesReady). recorded is the
	// tfvars of the newest attempt record (nil: none), for the inputs that
	// latch.
	Inputs(ctx context.Context, r client.Reader, obj client.Object, o Owner, recorded []byte) (inputs.RoleInputs, *metav1.Condition, error)
	// Outputs reads the contract from a state's outputs.
	Outputs(obj client.Object, o Owner, st *state.State) Contract
	// Apply writes the contract onto obj: status fields, and spec fields
	// that the manager writes once (endpoint, provider IDs). It returns the
	// names of spec fields it changed and event notes to emit.
	Apply(obj client.Object, c Contract) Applied
	// After is the kind's after-step on its Cluster API owner, once the
	// state was read (never paused, deleting or on a mismatched owner):
	// the conditions to set, the events to emit and the write it wants on
	// the owner. It writes nothing itself.
	After(obj client.Object, o Owner) AfterStep
	// Settle writes the kind's own status fields that follow the shared
	// ones once the outputs were applied (a pool's status.ready mirrors
	// initialization.provisioned) and returns the kind's own conditions
	// that do (a cluster's EndpointAvailable, once it was provisioned).
	Settle(obj client.Object) []metav1.Condition
	// Capabilities are what the kind does that the others do not.
	Capabilities() Capabilities
}

// Capabilities are the differences between the kinds the lifecycle
// engine acts on: it asks for them, never for the kind.
type Capabilities struct {
	// Dependents: the object's cluster has machines and pools that must be
	// gone before it is destroyed, and its apply, destroy and restore take
	// the cluster operation gate as the writer (a TerraformCluster).
	Dependents bool
	// GuardsEveryApply: every apply plans first and stops before a delete
	// or a replace until a TerraformPlan is approved; applyPolicy Manual
	// plans every change (a TerraformCluster).
	GuardsEveryApply bool
	// GuardsExports: an apply rendering other cluster exports than the last
	// successful one is guarded until its ExportsChange plan is approved,
	// by approval hash (the inputs hash without bootstrap_data), while the
	// object keeps rendering the exports it applied (a TerraformMachinePool).
	GuardsExports bool
	// RefreshesAfterApply: a successful apply whose health output was
	// pending is followed by a refresh, for the reading (a TerraformMachine
	// or TerraformMachinePool).
	RefreshesAfterApply bool
	// ReadyFollowsApplies: once provisioned, Ready still summarises
	// ApplyJobSucceeded, so a failed re-apply (a membership change) shows
	// (a TerraformMachinePool).
	ReadyFollowsApplies bool
	// SyncsOwner: the role's after-step writes to its Cluster API owner
	// (the autoscaling write-back of a TerraformMachinePool); the other
	// kinds' After does nothing.
	SyncsOwner bool
	// ShortName is the kind's kubectl short name (tfc, tfm, tfmp).
	ShortName string
}

// Planned: the object can have TerraformPlans.
func (c Capabilities) Planned() bool { return c.GuardsEveryApply || c.GuardsExports }

// Event is an event a role asks the engine to emit about the object: the
// one event type of what a pass reports.
type Event = conditions.Event

// AfterStep is what a role's after-step wants.
type AfterStep struct {
	Conditions []metav1.Condition
	Events     []Event
	// Patch, when set, is the owner with the role's changes: the engine
	// writes it as a merge patch from PatchBase, the owner as read.
	Patch, PatchBase client.Object
}

// Applied says what Role.Apply changed.
type Applied struct {
	// SpecChanged: a spec field was written; the caller patches the spec.
	SpecChanged bool
	// Events to emit.
	Events []Event
}

// ForKind returns the role of a workload kind.
func ForKind(kind string) (Role, bool) {
	switch kind {
	case state.KindCluster:
		return Cluster{}, true
	case state.KindMachine:
		return Machine{}, true
	case state.KindMachinePool:
		return MachinePool{}, true
	}
	return nil, false
}

// Of returns the role of a workload object (nil for any other object).
func Of(obj client.Object) Role {
	switch obj.(type) {
	case *infrav1.TerraformCluster:
		return Cluster{}
	case *infrav1.TerraformMachine:
		return Machine{}
	case *infrav1.TerraformMachinePool:
		return MachinePool{}
	}
	return nil
}

// ClusterNameOf is the Cluster a TerraformCluster belongs to: its owner
// Cluster, else its cluster-name label.
func ClusterNameOf(tc client.Object) string {
	cluster := tc.GetLabels()[infrav1.ClusterNameLabel]
	for _, ref := range tc.GetOwnerReferences() {
		if ref.Kind == "Cluster" {
			cluster = ref.Name
		}
	}
	return cluster
}
