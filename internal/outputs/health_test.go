package outputs_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/outputs"
)

// TestHealthCondition is the table of contract §10.2, row by row.
func TestHealthCondition(t *testing.T) {
	testCases := []struct {
		state   string
		healthy bool
		status  metav1.ConditionStatus
		reason  string
	}{
		{outputs.StatePending, false, metav1.ConditionFalse, infrav1.InstancePendingReason},
		{outputs.StatePending, true, metav1.ConditionFalse, infrav1.InstancePendingReason},
		{outputs.StateRunning, true, metav1.ConditionTrue, infrav1.HealthyReason},
		{outputs.StateRunning, false, metav1.ConditionFalse, infrav1.InstanceUnhealthyReason},
		{outputs.StateDegraded, true, metav1.ConditionFalse, infrav1.InstanceDegradedReason},
		{outputs.StateDegraded, false, metav1.ConditionFalse, infrav1.InstanceDegradedReason},
		{outputs.StateStopped, true, metav1.ConditionFalse, infrav1.InstanceStoppedReason},
		{outputs.StateStopped, false, metav1.ConditionFalse, infrav1.InstanceStoppedReason},
		{outputs.StateTerminated, true, metav1.ConditionFalse, infrav1.InstanceTerminatedReason},
		{outputs.StateTerminated, false, metav1.ConditionFalse, infrav1.InstanceTerminatedReason},
		{outputs.StateUnknown, true, metav1.ConditionUnknown, infrav1.HealthUnknownReason},
		{outputs.StateUnknown, false, metav1.ConditionUnknown, infrav1.HealthUnknownReason},
	}
	for _, tc := range testCases {
		h := outputs.Health{State: tc.state, Healthy: tc.healthy}
		t.Run(tc.state+"/"+map[bool]string{true: "healthy", false: "unhealthy"}[tc.healthy], func(t *testing.T) {
			c := h.Condition()
			if c.Type != infrav1.InfrastructureHealthyCondition || c.Message == "" {
				t.Errorf("condition %+v", c)
			}
			wantCondition(t, c, tc.status, tc.reason)
			if h.Pending() != (tc.state == outputs.StatePending) {
				t.Errorf("Pending() = %v", h.Pending())
			}
		})
	}
}

// TestHealthFromOutputs reads the health output of each role.
func TestHealthFromOutputs(t *testing.T) {
	health := map[string]string{"health": `{"state":"stopped","healthy":false,"message":"stopped by the provider","reasons":["Maintenance"],"extra":1}`}
	c, _ := outputs.ReadCluster(outs(clusterBase, health))
	m, _ := outputs.ReadMachine(outs(machineBase, health), outputs.MachineExpect{})
	p, _ := outputs.ReadPool(outs(poolBase, health))
	for _, h := range []*outputs.Health{c.Health, m.Health, p.Health} {
		want := outputs.Health{State: "stopped", Message: "stopped by the provider", Reasons: []string{"Maintenance"}}
		if h == nil || !equalJSON(*h, want) {
			t.Fatalf("health %+v, want %+v", h, want)
		}
		wantCondition(t, outputs.HealthCondition(h), metav1.ConditionFalse, infrav1.InstanceStoppedReason, "stopped by the provider (Maintenance)")
	}
}

func TestHealthMessage(t *testing.T) {
	long := strings.Repeat("é", 300)
	testCases := []struct {
		name   string
		health outputs.Health
		want   string
	}{
		{"module message", outputs.Health{State: "running", Healthy: true, Message: "3 of 3 nodes ready"}, "3 of 3 nodes ready"},
		{"message and reasons", outputs.Health{State: "degraded", Message: "1 node lost", Reasons: []string{"NodeLost", " ", "Spot"}}, "1 node lost (NodeLost, Spot)"},
		{"reasons only", outputs.Health{State: "degraded", Reasons: []string{"NodeLost"}}, "The module reports the infrastructure degraded (NodeLost)"},
		{"blank message", outputs.Health{State: "stopped", Message: "  "}, "The module reports the infrastructure stopped"},
		{"no message", outputs.Health{State: "unknown"}, "The module cannot tell the infrastructure's health"},
		{"state outside the enum", outputs.Health{State: "melting"}, "The module cannot tell the infrastructure's health"},
		{"long message cut on a rune boundary", outputs.Health{State: "running", Healthy: true, Message: long}, strings.Repeat("é", 126) + "…"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.health.Condition().Message
			if got != tc.want {
				t.Errorf("message %q, want %q", got, tc.want)
			}
			if len(got) > outputs.MaxHealthMessage || !utf8.ValidString(got) {
				t.Errorf("message of %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
			}
		})
	}
}

func TestHealthConditionUnknownHealth(t *testing.T) {
	wantCondition(t, outputs.HealthCondition(nil), metav1.ConditionUnknown, infrav1.HealthUnknownReason, "no health")
	c, _ := outputs.ReadCluster(outs(clusterBase, map[string]string{"health": `{"state":"running"}`}))
	if c.Health != nil {
		t.Errorf("an invalid health output gave a reading: %+v", c.Health)
	}
}
