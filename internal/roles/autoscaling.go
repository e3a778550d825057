package roles

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
)

// ReplicasManager is the value of cluster.x-k8s.io/replicas-managed-by
// CAPTF sets on an autoscaled MachinePool.
const ReplicasManager = "captf"

// Autoscaling is what a pool's after-step did: its AutoscalingActive
// condition and the events to emit (type, reason, note).
type Autoscaling struct {
	Condition metav1.Condition
	Events    [][3]string
}

// SyncAutoscaling is a TerraformMachinePool's after-step: while the
// MachinePool's autoscaler annotations are valid the module owns the
// count, and the observed replicas are written back to
// MachinePool.spec.replicas (unclamped), marked replicas-managed-by=captf.
// A foreign replicas-managed-by stops the write-back. Nothing is written
// to a MachinePool that does not reference the pool back.
func SyncAutoscaling(ctx context.Context, c client.Client, tmp *infrav1.TerraformMachinePool, o Owner) (Autoscaling, error) {
	mp, ok := o.Object.(*clusterv1.MachinePool)
	cond := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: infrav1.AutoscalingActiveCondition, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	if !ok || o.Mismatch {
		return Autoscaling{Condition: cond(metav1.ConditionFalse, infrav1.AutoscalingDisabledReason, "No MachinePool to read the autoscaler annotations from")}, nil
	}
	ann := mp.Annotations
	_, hasMin := ann[infrav1.AutoscalerMinSizeAnnotation]
	_, hasMax := ann[infrav1.AutoscalerMaxSizeAnnotation]
	as := inputs.AutoscalingOf(ann)
	manager := ann[infrav1.ReplicasManagedByAnnotation]
	var out Autoscaling
	switch {
	case !hasMin && !hasMax:
		out.Condition = cond(metav1.ConditionFalse, infrav1.AutoscalingDisabledReason, "MachinePool %s sets no autoscaler annotations: spec.replicas is the desired size", mp.Name)
	case !as.Enabled:
		out.Condition = cond(metav1.ConditionFalse, infrav1.AutoscalingAnnotationsInvalidReason,
			"MachinePool %s needs both %s and %s, non-negative integers with min <= max", mp.Name, infrav1.AutoscalerMinSizeAnnotation, infrav1.AutoscalerMaxSizeAnnotation)
	case manager != "" && manager != "false" && manager != ReplicasManager:
		out.Condition = cond(metav1.ConditionFalse, infrav1.ReplicasManagedExternallyReason,
			"MachinePool %s's %s is %q: CAPTF does not write its replicas back", mp.Name, infrav1.ReplicasManagedByAnnotation, manager)
		out.Events = append(out.Events, [3]string{"Warning", "ReplicasManagedExternally", out.Condition.Message})
		return out, nil
	default:
		out.Condition = cond(metav1.ConditionTrue, infrav1.ReplicasManagedByModuleReason,
			"The module owns the size of MachinePool %s (min %d, max %d); the observed replicas are written back", mp.Name, as.Min, as.Max)
	}
	patch := client.MergeFrom(mp.DeepCopy())
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
			out.Events = append(out.Events, [3]string{"Normal", "ReplicasWrittenBack", fmt.Sprintf("MachinePool %s spec.replicas %s → %d", mp.Name, from, *observed)})
			mp.Spec.Replicas = observed
			changed = true
		}
	} else if manager == ReplicasManager {
		delete(mp.Annotations, infrav1.ReplicasManagedByAnnotation)
		changed = true
	}
	if changed {
		if err := c.Patch(ctx, mp, patch); err != nil {
			return out, fmt.Errorf("writing MachinePool %s: %w", mp.Name, err)
		}
	}
	return out, nil
}
