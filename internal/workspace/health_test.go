package workspace

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
)

// missingContract is a machine reading with a null provider_id.
type missingContract struct{ roles.Contract }

func (missingContract) ProviderIDMissing() bool { return true }

func TestProviderIDHealth(t *testing.T) {
	healthy := cond(infrav1.InfrastructureHealthyCondition, metav1.ConditionTrue, infrav1.HealthyReason)
	testCases := []struct {
		name       string
		prev       *metav1.Condition
		newReading bool
		want       string
	}{
		{"first null reading", &healthy, true, infrav1.ProviderIDMissingReason},
		{"the same reading again keeps ProviderIDMissing", ptrTo(cond(healthy.Type, metav1.ConditionUnknown, infrav1.ProviderIDMissingReason)), false, infrav1.ProviderIDMissingReason},
		{"second null reading in a row: terminated", ptrTo(cond(healthy.Type, metav1.ConditionUnknown, infrav1.ProviderIDMissingReason)), true, infrav1.InstanceTerminatedReason},
		{"terminated stays terminated", &metav1.Condition{Type: healthy.Type, Status: metav1.ConditionFalse, Reason: infrav1.InstanceTerminatedReason, Message: providerIDGone + ": x"}, true, infrav1.InstanceTerminatedReason},
		{"a module's own terminated reading is not a second sample", ptrTo(cond(healthy.Type, metav1.ConditionFalse, infrav1.InstanceTerminatedReason)), true, infrav1.ProviderIDMissingReason},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tm := &infrav1.TerraformMachine{}
			if tc.prev != nil {
				tm.Status.Conditions = []metav1.Condition{*tc.prev}
			}
			p := &pass{role: roles.Machine{}, obj: tm, before: tm}
			got := p.providerIDHealth(healthy, missingContract{}, tc.newReading)
			if got.Reason != tc.want || got.Type != infrav1.InfrastructureHealthyCondition {
				t.Errorf("providerIDHealth = %+v, want reason %s", got, tc.want)
			}
		})
	}
}

func TestCountSample(t *testing.T) {
	tm := &infrav1.TerraformMachine{}
	p := &pass{role: roles.Machine{}, obj: tm, before: tm}
	steps := []struct {
		reason     string
		newReading bool
		want       int32
	}{
		{infrav1.InstanceUnhealthyReason, true, 1},
		{infrav1.InstanceUnhealthyReason, false, 1}, // the same reading counts once
		{infrav1.InstanceDegradedReason, true, 2},
		{infrav1.InstancePendingReason, true, 2},
		{infrav1.HealthUnknownReason, true, 2},
		{infrav1.InstanceTerminatedReason, true, 2},
		{infrav1.InstanceStoppedReason, true, 3},
		{infrav1.HealthyReason, true, 0},
	}
	for i, s := range steps {
		p.countSample(cond(infrav1.InfrastructureHealthyCondition, metav1.ConditionFalse, s.reason), s.newReading)
		if tm.Status.UnhealthySamples != s.want {
			t.Fatalf("step %d (%s): unhealthySamples = %d, want %d", i, s.reason, tm.Status.UnhealthySamples, s.want)
		}
	}
}
