package outputs_test

import (
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/outputs"
)

// members is a JSON list of n instances with distinct provider IDs.
func members(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"provider_id":"p://` + strconv.Itoa(i) + `"}`
	}
	return "[" + strings.Join(items, ",") + "]"
}

func TestReadPoolConditions(t *testing.T) {
	testCases := []struct {
		name      string
		changes   map[string]string
		status    metav1.ConditionStatus
		reason    string
		fragments []string
	}{
		{name: "valid", status: metav1.ConditionTrue, reason: infrav1.OutputsValidReason},
		{name: "group ID may stay null", changes: map[string]string{"provider_id": absent},
			status: metav1.ConditionTrue, reason: infrav1.OutputsValidReason},
		{name: "empty group ID is null", changes: map[string]string{"provider_id": `""`},
			status: metav1.ConditionTrue, reason: infrav1.OutputsValidReason},
		{name: "replicas missing", changes: map[string]string{"replicas": absent},
			status: metav1.ConditionFalse, reason: infrav1.OutputsMissingReason, fragments: []string{"replicas is missing from the state"}},
		{name: "provider ID list null in state", changes: map[string]string{"provider_id_list": `null`},
			status: metav1.ConditionUnknown, reason: infrav1.OutputsPendingReason, fragments: []string{"provider_id_list is null"}},
		{name: "negative replicas", changes: map[string]string{"replicas": `-1`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"replicas: must be at least 0"}},
		{name: "fractional replicas", changes: map[string]string{"replicas": `1.5`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"replicas: got number, want integer"}},
		{name: "replicas beyond int32", changes: map[string]string{"replicas": `2147483648`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"replicas: must be at most 2147483647"}},
		{name: "empty member ID", changes: map[string]string{"provider_id_list": `["p://a",""]`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"provider_id_list/1: minLength"}},
		{name: "instance without provider ID", changes: map[string]string{"instances": `[{"instance_id":"i"}]`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"instances/0: missing property 'provider_id'"}},
		{name: "instance state outside the enum", changes: map[string]string{"instances": `[{"provider_id":"p://a","state":"asleep"}]`},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"instances/0/state: value must be one of"}},
		{name: "instance ID longer than status allows", changes: map[string]string{
			"instances": `[{"provider_id":"p://a","instance_id":"` + strings.Repeat("é", 257) + `"}]`,
		}, status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"instances/0/instance_id: must be at most 256 characters"}},
		{name: "instance with 257 addresses", changes: map[string]string{
			"instances": `[{"provider_id":"p://a","addresses":` + repeat(`{"type":"Hostname","address":"n"}`, 257) + `}]`,
		}, status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"instances/0/addresses: must list at most 256 addresses"}},
		{name: "1000 instances fit", changes: map[string]string{"instances": members(1000)},
			status: metav1.ConditionTrue, reason: infrav1.OutputsValidReason},
		{name: "1001 instances truncated", changes: map[string]string{"instances": members(1001)},
			status: metav1.ConditionTrue, reason: infrav1.InstancesTruncatedReason,
			fragments: []string{"instances lists 1001 members; status.instances keeps the first 1000"}},
		{name: "instances past the cap are not judged", changes: map[string]string{
			"instances": strings.TrimSuffix(members(1000), "]") + `,{"bad":true}]`,
		}, status: metav1.ConditionTrue, reason: infrav1.InstancesTruncatedReason},
		{name: "pending outranks truncated", changes: map[string]string{"instances": members(1001), "health": `null`},
			status: metav1.ConditionUnknown, reason: infrav1.OutputsPendingReason, fragments: []string{"health is null", "; instances lists 1001"}},
		{name: "invalid hides truncation", changes: map[string]string{"instances": strings.Replace(members(1001), `"p://0"`, `""`, 1)},
			status: metav1.ConditionFalse, reason: infrav1.OutputsInvalidReason, fragments: []string{"instances/0/provider_id: minLength"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p, r := outputs.ReadPool(outs(poolBase, tc.changes))
			wantCondition(t, r.Condition(), tc.status, tc.reason, tc.fragments...)
			if !r.Valid() && (p.ProviderID != "" || p.ProviderIDList != nil || p.Replicas != nil || p.Instances != nil || p.Truncated) {
				t.Errorf("an invalid report wrote contract fields: %+v", p)
			}
			if r.Valid() && len(p.Instances) > outputs.MaxInstances {
				t.Errorf("%d instances, want at most %d", len(p.Instances), outputs.MaxInstances)
			}
			if p.Truncated != r.Has(infrav1.InstancesTruncatedReason) {
				t.Errorf("Truncated = %v, report %v", p.Truncated, r.Condition())
			}
		})
	}
}

func TestReadPoolFields(t *testing.T) {
	p, r := outputs.ReadPool(outs(poolBase, map[string]string{
		"provider_id":      `"asg-1"`,
		"provider_id_list": `["p://c","p://a","p://b","p://a","p://c"]`,
		"replicas":         `3.0`,
		"instances": `[{"provider_id":"p://c","instance_id":"","addresses":[],"failure_domain":"z","state":"stopped"},` +
			`{"provider_id":"p://a","instance_id":null,"addresses":[{"type":"Hostname","address":"a"},{"type":"InternalIP","address":"10.0.0.1"}]}]`,
	}))
	if !r.Valid() || r.Pending() {
		t.Fatalf("report: %+v", r.Condition())
	}
	if p.ProviderID != "asg-1" || strings.Join(p.ProviderIDList, " ") != "p://a p://b p://c" || p.Replicas == nil || *p.Replicas != 3 {
		t.Errorf("got %+v", p)
	}
	want := `[{"providerID":"p://c","failureDomain":"z","state":"stopped"},` +
		`{"providerID":"p://a","addresses":[{"type":"InternalIP","address":"10.0.0.1"},{"type":"Hostname","address":"a"}]}]`
	if got := jsonOf(p.Instances); got != want {
		t.Errorf("instances\n got %s\nwant %s", got, want)
	}

	p, r = outputs.ReadPool(outs(poolBase, map[string]string{"provider_id_list": `[]`, "replicas": `0`, "instances": `[]`}))
	if !r.Valid() || p.ProviderIDList != nil || p.Instances != nil || p.Replicas == nil || *p.Replicas != 0 {
		t.Errorf("empty pool: %+v %+v", p, r)
	}

	p, _ = outputs.ReadPool(outs(poolBase, map[string]string{"instances": members(2500)}))
	if len(p.Instances) != outputs.MaxInstances || !p.Truncated || p.Instances[999].ProviderID != "p://999" {
		t.Errorf("truncation kept %d instances, truncated=%v", len(p.Instances), p.Truncated)
	}
}
