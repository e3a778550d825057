package workspace

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
)

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
