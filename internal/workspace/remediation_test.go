package workspace

import (
	"testing"

	"k8s.io/utils/ptr"

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
