package conditions

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// TestProviderIDHealth: a machine whose module reports a null provider_id
// is judged over two readings: the first is ProviderIDMissing, the second
// in a row treats the instance as terminated; a pass over the same
// reading keeps the verdict, and a module's own terminated reading is not
// a first sample.
func TestProviderIDHealth(t *testing.T) {
	c := func(status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
		return &metav1.Condition{Type: infrav1.InfrastructureHealthyCondition, Status: status, Reason: reason, Message: msg}
	}
	healthy := c(metav1.ConditionTrue, infrav1.HealthyReason, "")
	missing := c(metav1.ConditionUnknown, infrav1.ProviderIDMissingReason, "")
	testCases := []struct {
		name       string
		prev       *metav1.Condition
		newReading bool
		want       string
	}{
		{"first null reading", healthy, true, infrav1.ProviderIDMissingReason},
		{"no condition yet", nil, true, infrav1.ProviderIDMissingReason},
		{"the same reading again keeps ProviderIDMissing", missing, false, infrav1.ProviderIDMissingReason},
		{"second null reading in a row: terminated", missing, true, infrav1.InstanceTerminatedReason},
		{"terminated stays terminated", c(metav1.ConditionFalse, infrav1.InstanceTerminatedReason, providerIDGone+": x"), true, infrav1.InstanceTerminatedReason},
		{"a module's own terminated reading is not a second sample", c(metav1.ConditionFalse, infrav1.InstanceTerminatedReason, ""), true, infrav1.ProviderIDMissingReason},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := ProviderIDHealth(tc.prev, tc.newReading)
			if got.Reason != tc.want || got.Type != infrav1.InfrastructureHealthyCondition {
				t.Errorf("ProviderIDHealth = %+v, want reason %s", got, tc.want)
			}
		})
	}
}

// TestDependenciesRendered: a provisioned machine's DependenciesReady is
// True; one it said True stays as it was said (its message and time), and
// an owner problem it said since is over.
func TestDependenciesRendered(t *testing.T) {
	said := metav1.Condition{Type: infrav1.DependenciesReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.DependenciesReadyReason, Message: "Everything the inputs need is there"}
	if got := DependenciesRendered(&said); got != said {
		t.Errorf("after a True: %+v, want it kept as said", got)
	}
	problem := metav1.Condition{Type: infrav1.DependenciesReadyCondition, Status: metav1.ConditionFalse, Reason: infrav1.WaitingForOwnerReason, Message: "no owner"}
	for name, prev := range map[string]*metav1.Condition{"after an owner problem": &problem, "with nothing said": nil} {
		if got := DependenciesRendered(prev); got.Status != metav1.ConditionTrue || got.Reason != infrav1.DependenciesReadyReason {
			t.Errorf("%s: %+v, want True DependenciesReady", name, got)
		}
	}
}
