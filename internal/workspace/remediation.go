package workspace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/metrics"
)

// Machine remediation. With remediation.annotateMachine, a TerraformMachine
// keeps cluster.x-k8s.io/remediate-machine on its Machine in step with the
// instance's health, so that Cluster API replaces a broken machine: it asks
// once status.unhealthySamples reaches the threshold, or at once for a
// terminated instance, and withdraws its own request once the instance is
// healthy again.

// remediation is a machine's effective remediation settings.
type remediation struct {
	annotate  bool
	threshold int32
	// interval spaces the health refreshes while annotating (seconds).
	interval int32
}

// remediationOf resolves a machine's settings: its own, else its
// TerraformCluster's defaults, else false / 3 / 300.
func remediationOf(own *infrav1.RemediationSpec, tc *infrav1.TerraformCluster) remediation {
	r := remediation{threshold: 3, interval: 300}
	var defaults *infrav1.RemediationSpec
	if tc != nil && tc.Spec.Defaults != nil {
		defaults = tc.Spec.Defaults.Remediation
	}
	for _, s := range []*infrav1.RemediationSpec{defaults, own} {
		if s == nil {
			continue
		}
		if s.AnnotateMachine != nil {
			r.annotate = *s.AnnotateMachine
		}
		if s.UnhealthyThreshold != nil {
			r.threshold = *s.UnhealthyThreshold
		}
		if s.HealthCheckIntervalSeconds != nil {
			r.interval = *s.HealthCheckIntervalSeconds
		}
	}
	return r
}

// remediationChange decides the Machine's annotation: request when the
// instance is terminated or unhealthy for threshold samples and nobody
// asked yet; withdraw CAPTF's own request once it is healthy again (never
// on a deleting Machine).
func remediationChange(r remediation, samples int32, health string, requested, ours, machineDeleting bool) (request, withdraw bool) {
	if !r.annotate {
		return false, false
	}
	unhealthy := health == infrav1.InstanceTerminatedReason || samples >= r.threshold
	return unhealthy && !requested, !unhealthy && requested && ours && health == infrav1.HealthyReason && !machineDeleting
}

// syncRemediation writes the remediation request on a provisioned
// TerraformMachine's Machine (live objects of matching owners only).
func (p *pass) syncRemediation(ctx context.Context) error {
	tm, ok := p.obj.(*infrav1.TerraformMachine)
	m, isMachine := p.owner.Object.(*clusterv1.Machine)
	if !ok || !isMachine || p.owner.Mismatch {
		return nil
	}
	health := p.current(infrav1.InfrastructureHealthyCondition)
	if health == nil {
		return nil
	}
	_, requested := m.Annotations[infrav1.RemediateMachineAnnotation]
	_, ours := m.Annotations[infrav1.RemediationRequestedAnnotation]
	request, withdraw := remediationChange(remediationOf(tm.Spec.Remediation, p.owner.Infra), tm.Status.UnhealthySamples, health.Reason,
		requested, ours, !m.DeletionTimestamp.IsZero())
	if !request && !withdraw {
		return nil
	}
	// The cached Machine's resourceVersion guards the patch: a Machine
	// changed meanwhile is looked at again by the next pass.
	patch := client.MergeFromWithOptions(m.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	if request {
		m.Annotations[infrav1.RemediateMachineAnnotation] = ""
		m.Annotations[infrav1.RemediationRequestedAnnotation] = health.Reason
	} else {
		delete(m.Annotations, infrav1.RemediateMachineAnnotation)
		delete(m.Annotations, infrav1.RemediationRequestedAnnotation)
	}
	if err := p.e.Client.Patch(ctx, m, patch); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("writing the remediation request on Machine %s: %w", m.Name, err)
	}
	if request {
		metrics.ObserveRemediationRequest("requested")
		p.eventf(corev1.EventTypeWarning, "RemediationRequested", "Asked Cluster API to remediate Machine %s (%s, %d unhealthy samples)", m.Name, health.Reason, tm.Status.UnhealthySamples)
	} else {
		metrics.ObserveRemediationRequest("withdrawn")
		p.eventf(corev1.EventTypeNormal, "RemediationWithdrawn", "Withdrew the remediation request on Machine %s: the instance is healthy again", m.Name)
	}
	return nil
}
