package roles

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
)

// ReplicasManager is the value of cluster.x-k8s.io/replicas-managed-by
// CAPTF sets on an autoscaled MachinePool.
const ReplicasManager = "captf"

// SyncAutoscaling is a TerraformMachinePool's after-step: while the
// MachinePool's autoscaler annotations are valid the module owns the
// count, and the observed replicas are written back to
// MachinePool.spec.replicas (unclamped), marked replicas-managed-by=captf.
// A foreign replicas-managed-by stops the write-back. Nothing is written
// to a MachinePool that does not reference the pool back. It returns the
// AutoscalingActive condition, the events and the MachinePool patch.
func SyncAutoscaling(tmp *infrav1.TerraformMachinePool, o Owner) AfterStep {
	mp, ok := o.Object.(*clusterv1.MachinePool)
	cond := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: infrav1.AutoscalingActiveCondition, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	if !ok || o.Mismatch {
		return AfterStep{Conditions: []metav1.Condition{cond(metav1.ConditionFalse, infrav1.AutoscalingDisabledReason, "No MachinePool to read the autoscaler annotations from")}}
	}
	base := mp
	mp = mp.DeepCopy()
	ann := mp.Annotations
	_, hasMin := ann[infrav1.AutoscalerMinSizeAnnotation]
	_, hasMax := ann[infrav1.AutoscalerMaxSizeAnnotation]
	as := inputs.AutoscalingOf(ann)
	manager := ann[infrav1.ReplicasManagedByAnnotation]
	var out AfterStep
	var c metav1.Condition
	switch {
	case !hasMin && !hasMax:
		c = cond(metav1.ConditionFalse, infrav1.AutoscalingDisabledReason, "MachinePool %s sets no autoscaler annotations: spec.replicas is the desired size", mp.Name)
	case !as.Enabled:
		c = cond(metav1.ConditionFalse, infrav1.AutoscalingAnnotationsInvalidReason,
			"MachinePool %s needs both %s and %s, non-negative integers with min <= max", mp.Name, infrav1.AutoscalerMinSizeAnnotation, infrav1.AutoscalerMaxSizeAnnotation)
	case manager != "" && manager != "false" && manager != ReplicasManager:
		c = cond(metav1.ConditionFalse, infrav1.ReplicasManagedExternallyReason,
			"MachinePool %s's %s is %q: CAPTF does not write its replicas back", mp.Name, infrav1.ReplicasManagedByAnnotation, manager)
		out.Conditions = []metav1.Condition{c}
		out.Events = append(out.Events, Event{Type: corev1.EventTypeWarning, Reason: "ReplicasManagedExternally", Note: c.Message})
		return out
	default:
		c = cond(metav1.ConditionTrue, infrav1.ReplicasManagedByModuleReason,
			"The module owns the size of MachinePool %s (min %d, max %d); the observed replicas are written back", mp.Name, as.Min, as.Max)
	}
	out.Conditions = []metav1.Condition{c}
	changed := false
	if as.Enabled {
		if manager != ReplicasManager {
			if mp.Annotations == nil {
				mp.Annotations = map[string]string{}
			}
			mp.Annotations[infrav1.ReplicasManagedByAnnotation] = ReplicasManager
			changed = true
		}
		if observed := tmp.Status.Replicas; observed != nil && (mp.Spec.Replicas == nil || *mp.Spec.Replicas != *observed) {
			from := "unset"
			if mp.Spec.Replicas != nil {
				from = fmt.Sprint(*mp.Spec.Replicas)
			}
			out.Events = append(out.Events, Event{Type: corev1.EventTypeNormal, Reason: "ReplicasWrittenBack", Note: fmt.Sprintf("MachinePool %s spec.replicas %s → %d", mp.Name, from, *observed)})
			mp.Spec.Replicas = observed
			changed = true
		}
	} else if manager == ReplicasManager {
		delete(mp.Annotations, infrav1.ReplicasManagedByAnnotation)
		changed = true
	}
	if changed {
		out.Patch, out.PatchBase = mp, base
	}
	return out
}
