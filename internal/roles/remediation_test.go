package roles

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestRemediationOf(t *testing.T) {
	tc := &infrav1.TerraformCluster{Spec: infrav1.TerraformClusterSpec{Defaults: &infrav1.ClusterDefaults{
		Remediation: &infrav1.RemediationSpec{AnnotateMachine: ptr.To(true), UnhealthyThreshold: ptr.To[int32](5)}}}}
	if got := remediationOf(nil, nil); got != (remediation{threshold: 3, interval: 300}) {
		t.Errorf("defaults = %+v", got)
	}
	if got := remediationOf(nil, tc); got != (remediation{annotate: true, threshold: 5, interval: 300}) {
		t.Errorf("inherited = %+v", got)
	}
	own := &infrav1.RemediationSpec{AnnotateMachine: ptr.To(false), HealthCheckIntervalSeconds: ptr.To[int32](60)}
	if got := remediationOf(own, tc); got != (remediation{annotate: false, threshold: 5, interval: 60}) {
		t.Errorf("the machine's own false must win: %+v", got)
	}
}

func TestRemediationChange(t *testing.T) {
	on := remediation{annotate: true, threshold: 3}
	testCases := []struct {
		name                      string
		r                         remediation
		samples                   int32
		health                    string
		requested, ours, deleting bool
		wantRequest, wantWithdraw bool
	}{
		{"off: never", remediation{threshold: 3}, 5, infrav1.InstanceTerminatedReason, false, false, false, false, false},
		{"below the threshold", on, 2, infrav1.InstanceUnhealthyReason, false, false, false, false, false},
		{"at the threshold", on, 3, infrav1.InstanceUnhealthyReason, false, false, false, true, false},
		{"terminated: at once", on, 0, infrav1.InstanceTerminatedReason, false, false, false, true, false},
		{"already requested", on, 4, infrav1.InstanceDegradedReason, true, true, false, false, false},
		{"healthy again: withdraw ours", on, 0, infrav1.HealthyReason, true, true, false, false, true},
		{"healthy again: never withdraw another's", on, 0, infrav1.HealthyReason, true, false, false, false, false},
		{"pending is not healthy: keep", on, 0, infrav1.InstancePendingReason, true, true, false, false, false},
		{"a deleting Machine keeps it", on, 0, infrav1.HealthyReason, true, true, true, false, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			req, wd := remediationChange(tc.r, tc.samples, tc.health, tc.requested, tc.ours, tc.deleting)
			if req != tc.wantRequest || wd != tc.wantWithdraw {
				t.Errorf("remediationChange = request %v, withdraw %v; want %v, %v", req, wd, tc.wantRequest, tc.wantWithdraw)
			}
		})
	}
}

// TestMachineRemediation: the Machine patch and the event the machine
// role asks for, and none on a mismatched owner or while nothing changes.
func TestMachineRemediation(t *testing.T) {
	on := &infrav1.RemediationSpec{AnnotateMachine: ptr.To(true)}
	unhealthy := metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionFalse, Reason: infrav1.InstanceUnhealthyReason}
	healthy := metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: metav1.ConditionTrue, Reason: infrav1.HealthyReason}
	machine := func(annotations map[string]string) *clusterv1.Machine {
		return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m0", Annotations: annotations}}
	}
	ours := map[string]string{infrav1.RemediateMachineAnnotation: "", infrav1.RemediationRequestedAnnotation: infrav1.InstanceUnhealthyReason}
	testCases := []struct {
		name        string
		spec        *infrav1.RemediationSpec
		samples     int32
		owner       Owner
		health      metav1.Condition
		wantRequest *bool // nil: no change
		wantEvent   string
	}{
		{"unhealthy at the threshold: request", on, 3, Owner{Object: machine(nil)}, unhealthy, ptr.To(true), "RemediationRequested"},
		{"below the threshold: nothing", on, 2, Owner{Object: machine(nil)}, unhealthy, nil, ""},
		{"not annotating: nothing", nil, 5, Owner{Object: machine(nil)}, unhealthy, nil, ""},
		{"a mismatched owner is never written", on, 5, Owner{Object: machine(nil), Mismatch: true}, unhealthy, nil, ""},
		{"no Machine: nothing", on, 5, Owner{}, unhealthy, nil, ""},
		{"healthy again: withdraw ours", on, 0, Owner{Object: machine(ours)}, healthy, ptr.To(false), "RemediationWithdrawn"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tm := &infrav1.TerraformMachine{Spec: infrav1.TerraformMachineSpec{Remediation: tc.spec}}
			tm.Status.UnhealthySamples = tc.samples
			got := Machine{}.Remediation(tm, tc.owner, tc.health)
			if tc.wantRequest == nil {
				if got != nil {
					t.Fatalf("Remediation = %+v, want none", got)
				}
				return
			}
			if got == nil || got.Requested != *tc.wantRequest || got.Event.Reason != tc.wantEvent {
				t.Fatalf("Remediation = %+v, want requested %v with event %s", got, *tc.wantRequest, tc.wantEvent)
			}
			_, annotated := got.Machine.Annotations[infrav1.RemediateMachineAnnotation]
			if annotated != *tc.wantRequest {
				t.Errorf("patched Machine annotated = %v, want %v", annotated, *tc.wantRequest)
			}
			if _, baseChanged := got.Base.Annotations[infrav1.RemediationRequestedAnnotation]; baseChanged == *tc.wantRequest {
				t.Errorf("the patch base was changed: %v", got.Base.Annotations)
			}
		})
	}
}
