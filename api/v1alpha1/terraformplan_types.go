package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlanReason says why a TerraformPlan waits for approval.
// +kubebuilder:validation:Enum=Manual;Destructive;ExportsChange
type PlanReason string

const (
	// PlanReasonManual: the target's applyPolicy is Manual.
	PlanReasonManual PlanReason = "Manual"
	// PlanReasonDestructive: the plan deletes or replaces a resource.
	PlanReasonDestructive PlanReason = "Destructive"
	// PlanReasonExportsChange: a pool apply with changed cluster exports
	// deletes or replaces a resource.
	PlanReasonExportsChange PlanReason = "ExportsChange"
)

// PlanPhase is where a TerraformPlan is in its life.
// +kubebuilder:validation:Enum=Pending;Approved;Applied;Superseded;Failed
type PlanPhase string

const (
	// PlanPhasePending: live, waiting for approval.
	PlanPhasePending PlanPhase = "Pending"
	// PlanPhaseApproved: live, approved; its apply is due.
	PlanPhaseApproved PlanPhase = "Approved"
	// PlanPhaseApplied: terminal; the approved apply succeeded.
	PlanPhaseApplied PlanPhase = "Applied"
	// PlanPhaseSuperseded: terminal; a newer plan replaced it or it became moot.
	PlanPhaseSuperseded PlanPhase = "Superseded"
	// PlanPhaseFailed: terminal; the approved apply planned other changes.
	PlanPhaseFailed PlanPhase = "Failed"
)

// PlanTargetReference names the object a TerraformPlan plans for.
type PlanTargetReference struct {
	// kind of the target.
	// +required
	// +kubebuilder:validation:Enum=TerraformCluster;TerraformMachinePool
	Kind string `json:"kind,omitempty"`

	// name of the target, in the plan's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
}

// PlanSummary counts a plan's changes. It never carries values.
// +kubebuilder:validation:MinProperties=1
type PlanSummary struct {
	// create is the number of resources to create.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Create int32 `json:"create"`
	// update is the number of resources to update in place.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Update int32 `json:"update"`
	// replace is the number of resources to replace.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replace int32 `json:"replace"`
	// delete is the number of resources to delete.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Delete int32 `json:"delete"`
	// import is the number of resources to import.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Import int32 `json:"import"`
	// move is the number of resources to move.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Move int32 `json:"move"`
	// forget is the number of resources to remove from state only.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Forget int32 `json:"forget"`
	// outputChanges is the number of root outputs that change.
	// +optional
	// +kubebuilder:validation:Minimum=0
	OutputChanges int32 `json:"outputChanges"`
	// resources are "<address> (<labels>)" entries sorted by address.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=600
	Resources []string `json:"resources,omitempty"`
	// truncated is true when more than 50 resources changed.
	// +optional
	Truncated bool `json:"truncated,omitempty"`
}

// TerraformPlanSpec is a plan awaiting approval. Everything but the approval
// fields is immutable; approval is one-way.
// +kubebuilder:validation:XValidation:rule="self.targetRef == oldSelf.targetRef",message="targetRef is immutable",fieldPath=".targetRef"
// +kubebuilder:validation:XValidation:rule="self.planHash == oldSelf.planHash",message="planHash is immutable",fieldPath=".planHash"
// +kubebuilder:validation:XValidation:rule="self.inputsHash == oldSelf.inputsHash",message="inputsHash is immutable",fieldPath=".inputsHash"
// +kubebuilder:validation:XValidation:rule="self.reason == oldSelf.reason",message="reason is immutable",fieldPath=".reason"
// +kubebuilder:validation:XValidation:rule="self.summary == oldSelf.summary",message="summary is immutable",fieldPath=".summary"
// +kubebuilder:validation:XValidation:rule="(has(self.approved) && self.approved) == has(self.approvedBy)",message="approvedBy must be set exactly when approved is true",fieldPath=".approvedBy"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.approved) || !oldSelf.approved || (has(self.approved) && self.approved && self.approvedBy == oldSelf.approvedBy)",message="an approval cannot be withdrawn or re-attributed",fieldPath=".approved"
type TerraformPlanSpec struct {
	// targetRef is the object the plan is for.
	// +required
	TargetRef PlanTargetReference `json:"targetRef,omitzero"`

	// planHash is the keyed fingerprint (p2:...) of the planned changes.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	PlanHash string `json:"planHash,omitempty"`

	// inputsHash is the inputs hash the plan was made from (for pool
	// ExportsChange plans, the approval hash).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	InputsHash string `json:"inputsHash,omitempty"`

	// reason the plan needs approval.
	// +required
	Reason PlanReason `json:"reason,omitempty"`

	// summary counts the planned changes.
	// +required
	Summary PlanSummary `json:"summary,omitzero"`

	// approved approves the plan. It can only go from unset or false to true,
	// and only while the plan is live.
	// +optional
	Approved *bool `json:"approved,omitempty"`

	// approvedBy is the user who approved; it must be the user setting
	// approved.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ApprovedBy string `json:"approvedBy,omitempty"`
}

// TerraformPlanStatus is the observed state of a TerraformPlan.
type TerraformPlanStatus struct {
	// phase of the plan; the captf.io/plan-phase label is the source of
	// truth for terminal phases.
	// +optional
	Phase PlanPhase `json:"phase,omitempty"`

	// observedGeneration is the generation the status was computed for.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready and Approved.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TerraformPlan is a plan the manager made that waits for a person's
// approval before it is applied. Only the manager creates plans.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=terraformplans,scope=Namespaced,categories=cluster-api,shortName=tfplan
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/provider=infrastructure-terraform"
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move="
// +kubebuilder:printcolumn:name="Target",type="string",JSONPath=".spec.targetRef.name"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".spec.reason"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".metadata.labels['captf\\.io/plan-phase']"
// +kubebuilder:printcolumn:name="Create",type="integer",JSONPath=".spec.summary.create"
// +kubebuilder:printcolumn:name="Update",type="integer",JSONPath=".spec.summary.update"
// +kubebuilder:printcolumn:name="Replace",type="integer",JSONPath=".spec.summary.replace"
// +kubebuilder:printcolumn:name="Delete",type="integer",JSONPath=".spec.summary.delete"
// +kubebuilder:printcolumn:name="Approved",type="boolean",JSONPath=".spec.approved"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TerraformPlan struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the plan.
	// +required
	Spec TerraformPlanSpec `json:"spec,omitzero"`

	// status is the observed state.
	// +optional
	Status TerraformPlanStatus `json:"status,omitzero"`
}

// TerraformPlanList is a list of TerraformPlans.
// +kubebuilder:object:root=true
type TerraformPlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TerraformPlan `json:"items"`
}

func init() {
	register(&TerraformPlan{}, &TerraformPlanList{})
}
