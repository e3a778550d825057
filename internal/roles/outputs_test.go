package roles_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

// stateWith is a state whose root outputs are the JSON values given.
func stateWith(values map[string]string) *state.State {
	out := map[string]state.Output{}
	for k, v := range values {
		out[k] = state.Output{Value: json.RawMessage(v), Type: json.RawMessage(`"dynamic"`), Sensitive: true}
	}
	return &state.State{Outputs: out}
}

func clusterOutputs(exports string) map[string]string {
	return map[string]string{
		"control_plane_endpoint": `{"host":"api.example.test","port":6443}`,
		"failure_domains":        `[{"name":"zone-a"}]`,
		"exports":                exports,
		"health":                 `{"state":"running","healthy":true}`,
	}
}

// TestClusterApply: the module's endpoint lands in the spec once, only
// while neither the TerraformCluster nor the Cluster sets one; failure
// domains and exports are published, and exports too large to publish are
// cleared with a warning.
func TestClusterApply(t *testing.T) {
	big := `{"blob":"` + strings.Repeat("x", 70000) + `"}`
	testCases := []struct {
		name            string
		outputs         map[string]string
		specEndpoint    clusterv1.APIEndpoint
		clusterEndpoint clusterv1.APIEndpoint
		published       bool // status.exports set before
		wantSpecChanged bool
		wantEndpoint    string
		wantEvents      []string
		wantExports     bool
	}{
		{name: "endpoint written once", outputs: clusterOutputs(`{"id":"c-1"}`), wantSpecChanged: true, wantEndpoint: "api.example.test",
			wantEvents: []string{"ControlPlaneEndpointSet", "FailureDomainsChanged"}, wantExports: true},
		{name: "the Cluster sets the endpoint", outputs: clusterOutputs(`{"id":"c-1"}`), clusterEndpoint: clusterv1.APIEndpoint{Host: "lb.test", Port: 443},
			wantEvents: []string{"FailureDomainsChanged"}, wantExports: true},
		{name: "the spec has one already", outputs: clusterOutputs(`{"id":"c-1"}`), specEndpoint: clusterv1.APIEndpoint{Host: "mine.test", Port: 6443},
			wantEndpoint: "mine.test", wantEvents: []string{"FailureDomainsChanged"}, wantExports: true},
		{name: "invalid outputs change nothing", outputs: map[string]string{"control_plane_endpoint": `{"host":"h"}`, "health": `{"state":"running","healthy":true}`}},
		{name: "exports too large are cleared", outputs: clusterOutputs(big), published: true, wantSpecChanged: true, wantEndpoint: "api.example.test",
			wantEvents: []string{"ControlPlaneEndpointSet", "FailureDomainsChanged", "ExportsNotPublished"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &infrav1.TerraformCluster{Spec: infrav1.TerraformClusterSpec{ControlPlaneEndpoint: tc.specEndpoint}}
			if tc.published {
				obj.Status.Exports = &apiextensionsv1.JSON{Raw: []byte(`{"old":true}`)}
			}
			owner := roles.Owner{Cluster: &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{ControlPlaneEndpoint: tc.clusterEndpoint}}}
			r := roles.Cluster{}
			a := r.Apply(obj, r.Outputs(obj, owner, stateWith(tc.outputs)))
			if a.SpecChanged != tc.wantSpecChanged || obj.Spec.ControlPlaneEndpoint.Host != tc.wantEndpoint {
				t.Errorf("spec changed %v, endpoint %q; want %v, %q", a.SpecChanged, obj.Spec.ControlPlaneEndpoint.Host, tc.wantSpecChanged, tc.wantEndpoint)
			}
			if a.SpecChanged && obj.Annotations[infrav1.EndpointSourceAnnotation] != "module" {
				t.Errorf("a module endpoint without %s=module", infrav1.EndpointSourceAnnotation)
			}
			var got []string
			for _, ev := range a.Events {
				got = append(got, ev.Reason)
				want := corev1.EventTypeNormal
				if ev.Reason == "ExportsNotPublished" {
					want = corev1.EventTypeWarning
				}
				if ev.Type != want {
					t.Errorf("event %s is %s, want %s", ev.Reason, ev.Type, want)
				}
			}
			if !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events %v, want %v", got, tc.wantEvents)
			}
			if (obj.Status.Exports != nil) != tc.wantExports {
				t.Errorf("status.exports %v, want published: %v", obj.Status.Exports, tc.wantExports)
			}
		})
	}
}

// TestMachineApply: a machine's provider ID is written to its spec once;
// a module that later reports another one is not provisionable and does
// not overwrite it.
func TestMachineApply(t *testing.T) {
	outputs := map[string]string{"provider_id": `"noop:///m-1"`, "addresses": `[]`, "failure_domain": `null`, "interruptible": `false`,
		"health": `{"state":"running","healthy":true}`}
	testCases := []struct {
		had, want          string
		changed, provision bool
	}{
		{had: "", want: "noop:///m-1", changed: true, provision: true},
		{had: "noop:///m-1", want: "noop:///m-1", provision: true},
		{had: "noop:///earlier", want: "noop:///earlier"},
	}
	for _, tc := range testCases {
		obj := &infrav1.TerraformMachine{Spec: infrav1.TerraformMachineSpec{ProviderID: tc.had}}
		r := roles.Machine{}
		c := r.Outputs(obj, roles.Owner{}, stateWith(outputs))
		a := r.Apply(obj, c)
		if obj.Spec.ProviderID != tc.want || a.SpecChanged != tc.changed || (len(a.Events) == 1) != tc.changed || c.Provisionable() != tc.provision {
			t.Errorf("had %q: provider ID %q, spec changed %v, events %v, provisionable %v; want %q, %v, %v",
				tc.had, obj.Spec.ProviderID, a.SpecChanged, a.Events, c.Provisionable(), tc.want, tc.changed, tc.provision)
		}
	}
}
