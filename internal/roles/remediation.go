package roles

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Remediator is implemented by a kind whose instance Cluster API can
// replace (a TerraformMachine). With remediation.annotateMachine, the
// object keeps cluster.x-k8s.io/remediate-machine on its Machine in step
// with the instance's health: it asks once status.unhealthySamples
// reaches the threshold, or at once for a terminated instance, and
// withdraws its own request once the instance is healthy again. A
// remediator writes nothing: the engine writes the patch it returns.
type Remediator interface {
	// HealthCheckInterval spaces the health refreshes while the object
	// annotates its Machine (0: it does not).
	HealthCheckInterval(obj client.Object, o Owner) time.Duration
	// CountSample keeps status.unhealthySamples from a new health
	// reading: a healthy one resets it, an unhealthy, degraded or stopped
	// one counts; pending, unknown and terminated readings leave it.
	CountSample(obj client.Object, health metav1.Condition)
	// UnhealthySamples is status.unhealthySamples.
	UnhealthySamples(obj client.Object) int32
	// Remediation is the change the Machine's annotation needs after a
	// reading of health (nil: none): on a provisioned object whose owner
	// is a Machine that references it back.
	Remediation(obj client.Object, o Owner, health metav1.Condition) *Remediation
}

// Remediation is a request to Cluster API to remediate a Machine, or the
// withdrawal of CAPTF's own request.
type Remediation struct {
	// Machine is the patched Machine, to write as a merge patch from Base
	// guarded by Base's resourceVersion: a Machine changed meanwhile is
	// looked at again by the next pass.
	Machine, Base *clusterv1.Machine
	// Requested: a request (else a withdrawal).
	Requested bool
	// Event tells the object's users.
	Event Event
}

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

// HealthCheckInterval implements Remediator.
func (Machine) HealthCheckInterval(obj client.Object, o Owner) time.Duration {
	r := remediationOf(obj.(*infrav1.TerraformMachine).Spec.Remediation, o.Infra)
	if !r.annotate {
		return 0
	}
	return time.Duration(r.interval) * time.Second
}

// CountSample implements Remediator.
func (Machine) CountSample(obj client.Object, health metav1.Condition) {
	tm := obj.(*infrav1.TerraformMachine)
	switch health.Reason {
	case infrav1.HealthyReason:
		tm.Status.UnhealthySamples = 0
	case infrav1.InstanceUnhealthyReason, infrav1.InstanceDegradedReason, infrav1.InstanceStoppedReason:
		tm.Status.UnhealthySamples++
	}
}

// UnhealthySamples implements Remediator.
func (Machine) UnhealthySamples(obj client.Object) int32 {
	return obj.(*infrav1.TerraformMachine).Status.UnhealthySamples
}

// Remediation implements Remediator.
func (Machine) Remediation(obj client.Object, o Owner, health metav1.Condition) *Remediation {
	tm := obj.(*infrav1.TerraformMachine)
	m, isMachine := o.Object.(*clusterv1.Machine)
	if !isMachine || o.Mismatch {
		return nil
	}
	_, requested := m.Annotations[infrav1.RemediateMachineAnnotation]
	_, ours := m.Annotations[infrav1.RemediationRequestedAnnotation]
	request, withdraw := remediationChange(remediationOf(tm.Spec.Remediation, o.Infra), tm.Status.UnhealthySamples, health.Reason,
		requested, ours, !m.DeletionTimestamp.IsZero())
	if !request && !withdraw {
		return nil
	}
	r := &Remediation{Base: m, Machine: m.DeepCopy(), Requested: request}
	if r.Machine.Annotations == nil {
		r.Machine.Annotations = map[string]string{}
	}
	if request {
		r.Machine.Annotations[infrav1.RemediateMachineAnnotation] = ""
		r.Machine.Annotations[infrav1.RemediationRequestedAnnotation] = health.Reason
		r.Event = Event{Type: corev1.EventTypeWarning, Reason: "RemediationRequested",
			Note: fmt.Sprintf("Asked Cluster API to remediate Machine %s (%s, %d unhealthy samples)", m.Name, health.Reason, tm.Status.UnhealthySamples)}
	} else {
		delete(r.Machine.Annotations, infrav1.RemediateMachineAnnotation)
		delete(r.Machine.Annotations, infrav1.RemediationRequestedAnnotation)
		r.Event = Event{Type: corev1.EventTypeNormal, Reason: "RemediationWithdrawn",
			Note: fmt.Sprintf("Withdrew the remediation request on Machine %s: the instance is healthy again", m.Name)}
	}
	return r
}

var _ Remediator = Machine{}
