package outputs_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/outputs"
)

func TestReadClusterConditions(t *testing.T) {
	testCases := []struct {
		name      string
		changes   map[string]string
		status    metav1.ConditionStatus
		reason    string
		fragments []string
		health    bool // Health is set
	}{
		{name: "valid", status: metav1.ConditionTrue, reason: infrav1.OutputsValidReason, health: true},
		{name: "every nullable output null", changes: map[string]string{
			"control_plane_endpoint": absent, "failure_domains": absent, "exports": "null",
		}, status: metav1.ConditionTrue, reason: infrav1.OutputsValidReason, health: true},
		{name: "health absent", changes: map[string]string{"health": absent},
			status: metav1.ConditionFalse, reason: infrav1.OutputsMissingReason, fragments: []string{"health is missing from the state"}},
		{name: "no outputs at all", changes: map[string]string{
			"control_plane_endpoint": absent, "failure_domains": absent, "exports": absent, "health": absent,
		}, status: metav1.ConditionFalse, reason: infrav1.OutputsMissingReason, fragments: []string{"health is missing"}},
		{name: "health null in state", changes: map[string]string{"health": "null"},
			status: metav1.ConditionUnknown, reason: infrav1.OutputsPendingReason, fragments: []string{"health is null: not known yet"}},
		{name: "health state outside the enum", changes: map[string]string{"health": `{"state":"melting","healthy":true}`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"health/state: value must be one of"}},
		{name: "health without healthy", changes: map[string]string{"health": `{"state":"running"}`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"health: missing property 'healthy'"}},
		{name: "endpoint half-set", changes: map[string]string{"control_plane_endpoint": `{"host":"api.example.test"}`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true,
			fragments: []string{"control_plane_endpoint: missing property 'port'"}},
		{name: "endpoint port out of range", changes: map[string]string{"control_plane_endpoint": `{"host":"h","port":70000}`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true,
			fragments: []string{"control_plane_endpoint/port: must be at most 65535"}},
		{name: "endpoint empty host", changes: map[string]string{"control_plane_endpoint": `{"host":"","port":6443}`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true,
			fragments: []string{"control_plane_endpoint/host: minLength"}},
		{name: "duplicate failure-domain names", changes: map[string]string{
			"failure_domains": `[{"name":"a"},{"name":"b"},{"name":"a"}]`,
		}, status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true,
			fragments: []string{"failure_domains/2/name repeats failure_domains/0/name: names must be unique"}},
		{name: "101 failure domains", changes: map[string]string{"failure_domains": repeat(`{"name":"a"}`, 101)},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true,
			fragments: []string{"failure_domains: maxItems: got 101, want 100"}},
		{name: "failure domain without a name", changes: map[string]string{"failure_domains": `[{"attributes":{}}]`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true,
			fragments: []string{"failure_domains/0: missing property 'name'"}},
		{name: "failure-domain attribute not a string", changes: map[string]string{
			"failure_domains": `[{"name":"a","attributes":{"zone":1}}]`,
		}, status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true,
			fragments: []string{"failure_domains/0/attributes/*: got number, want string"}},
		{name: "exports with a fractional number", changes: map[string]string{"exports": `{"ratio":[1,0.5]}`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true,
			fragments: []string{outputs.ExportsNumberMessage}},
		{name: "exports with an exponent", changes: map[string]string{"exports": `1e3`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true},
		{name: "an output that is not JSON", changes: map[string]string{"exports": `{"a":`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, health: true, fragments: []string{"exports is not valid JSON"}},
		{name: "missing outranks invalid, all problems listed", changes: map[string]string{
			"health": absent, "control_plane_endpoint": `{"port":1}`,
		}, status: metav1.ConditionFalse, reason: infrav1.OutputsMissingReason,
			fragments: []string{"health is missing from the state", "; control_plane_endpoint: missing property 'host'"}},
		{name: "invalid outranks pending", changes: map[string]string{
			"health": "null", "failure_domains": `[{"name":""}]`,
		}, status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason,
			fragments: []string{"failure_domains/0/name: minLength: must have at least 1 characters; health is null"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c, r := outputs.ReadCluster(outs(clusterBase, tc.changes))
			wantCondition(t, r.Condition(), tc.status, tc.reason, tc.fragments...)
			if (c.Health != nil) != tc.health {
				t.Errorf("Health = %v, want set: %v", c.Health, tc.health)
			}
			if !r.Valid() && (c.Endpoint != nil || c.FailureDomains != nil || c.Exports != nil || c.ExportsPublishable) {
				t.Errorf("an invalid report wrote contract fields: %v", c)
			}
		})
	}
}

func TestReadClusterFields(t *testing.T) {
	testCases := []struct {
		name      string
		changes   map[string]string
		endpoint  *clusterv1.APIEndpoint
		domains   []clusterv1.FailureDomain
		exports   string
		published bool
	}{
		{name: "everything set",
			endpoint: &clusterv1.APIEndpoint{Host: "api.example.test", Port: 6443},
			domains: []clusterv1.FailureDomain{
				{Name: "zone-a", ControlPlane: ptr.To(false), Attributes: map[string]string{"zone": "a"}},
				{Name: "zone-b", ControlPlane: ptr.To(true)},
			},
			exports: `{"cluster_id":"c-1","subnets":["s-1","s-2"]}`, published: true},
		{name: "nulls clear and default", changes: map[string]string{
			"control_plane_endpoint": absent, "failure_domains": absent, "exports": absent,
		}, exports: `{}`, published: true},
		{name: "empty failure domains clear like null", changes: map[string]string{"failure_domains": `[]`},
			endpoint: &clusterv1.APIEndpoint{Host: "api.example.test", Port: 6443}, exports: `{"cluster_id":"c-1","subnets":["s-1","s-2"]}`, published: true},
		{name: "null optional attributes take their defaults", changes: map[string]string{
			"failure_domains": `[{"name":"a","control_plane":null,"attributes":null}]`, "exports": `"x"`,
		}, endpoint: &clusterv1.APIEndpoint{Host: "api.example.test", Port: 6443},
			domains: []clusterv1.FailureDomain{{Name: "a", ControlPlane: ptr.To(true)}}, exports: `"x"`, published: true},
		{name: "integral port written as a float", changes: map[string]string{
			"control_plane_endpoint": `{"host":"h","port":443.0,"extra":"ignored"}`, "failure_domains": `[]`,
		}, endpoint: &clusterv1.APIEndpoint{Host: "h", Port: 443}, exports: `{"cluster_id":"c-1","subnets":["s-1","s-2"]}`, published: true},
		{name: "exports compacted", changes: map[string]string{"exports": "{ \"a\" : [ 1, 2 ],\n \"b\": \"<&>\" }", "failure_domains": `[]`},
			endpoint: &clusterv1.APIEndpoint{Host: "api.example.test", Port: 6443}, exports: `{"a":[1,2],"b":"<&>"}`, published: true},
		{name: "exports over 64 KiB are not published", changes: map[string]string{
			"exports": `{"big":"` + strings.Repeat("x", 65530) + `"}`, "failure_domains": `[]`,
		}, endpoint: &clusterv1.APIEndpoint{Host: "api.example.test", Port: 6443}, exports: `{"big":"` + strings.Repeat("x", 65530) + `"}`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c, r := outputs.ReadCluster(outs(clusterBase, tc.changes))
			if !r.Valid() || r.Pending() {
				t.Fatalf("report: %+v", r.Condition())
			}
			if !equalJSON(c.Endpoint, tc.endpoint) || !equalJSON(c.FailureDomains, tc.domains) {
				t.Errorf("endpoint %v, failure domains %v; want %v, %v", c.Endpoint, jsonOf(c.FailureDomains), tc.endpoint, jsonOf(tc.domains))
			}
			if tc.domains == nil && c.FailureDomains != nil {
				t.Errorf("FailureDomains = %v, want nil", jsonOf(c.FailureDomains))
			}
			if string(c.Exports) != tc.exports || c.ExportsPublishable != tc.published {
				t.Errorf("exports %d bytes publishable=%v, want %d bytes publishable=%v", len(c.Exports), c.ExportsPublishable, len(tc.exports), tc.published)
			}
		})
	}
}

func TestExportsLimitIsInclusive(t *testing.T) {
	pad := 65536 - len(`{"a":""}`)
	c, _ := outputs.ReadCluster(outs(clusterBase, map[string]string{"exports": `{"a":"` + strings.Repeat("x", pad) + `"}`}))
	if len(c.Exports) != outputs.MaxExportsBytes || !c.ExportsPublishable {
		t.Errorf("%d bytes publishable=%v, want %d bytes publishable", len(c.Exports), c.ExportsPublishable, outputs.MaxExportsBytes)
	}
}
