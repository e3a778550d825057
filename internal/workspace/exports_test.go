package workspace

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

var (
	tfvarsE1 = []byte(`{"bootstrap_data":"b","captf_cluster_outputs":{"network_id":"n-1"}}`)
	tfvarsE2 = []byte(`{"bootstrap_data":"b","captf_cluster_outputs":{"network_id":"n-2"}}`)
	e1, e2   = inputs.ExportsHash(tfvarsE1), inputs.ExportsHash(tfvarsE2)
)

// poolPass is a pass over a provisioned pool whose state holds inputs
// hash h2:applied and whose applied record rendered exports E1.
func poolPass() *pass {
	tmp := &infrav1.TerraformMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool"}}
	p := &pass{role: roles.MachinePool{}, obj: tmp, st: &state.State{}}
	suffix, _ := state.Suffix("ns", state.KindMachinePool, "pool")
	p.stSecrets = []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: state.SecretName(suffix),
		Annotations: map[string]string{infrav1.InputsHashAnnotation: "h2:applied"}}}}
	p.inputs.attempt = &records.Record{AppliedExports: e1}
	p.inputs.applied = &records.Record{InputsHash: "h2:applied", Tfvars: tfvarsE1}
	return p
}

func TestExportsGuarded(t *testing.T) {
	testCases := []struct {
		name     string
		change   func(*pass)
		rendered string
		want     bool
	}{
		{"the applied exports", func(*pass) {}, e1, false},
		{"other exports", func(*pass) {}, e2, true},
		{"partly applied: every apply", func(p *pass) { p.inputs.attempt.PartialExports = `{"job":"j"}` }, e1, true},
		{"never applied", func(p *pass) { p.st, p.stErr, p.stSecrets, p.inputs.attempt = nil, state.ErrNotFound, nil, nil }, e2, false},
		{"no record: the applied record proves the baseline", func(p *pass) { p.inputs.attempt.AppliedExports = "" }, e1, false},
		{"no record: a change from the proven baseline", func(p *pass) { p.inputs.attempt.AppliedExports = "" }, e2, true},
		{"no record and nothing proves the baseline", func(p *pass) {
			p.inputs.attempt.AppliedExports, p.inputs.applied.InputsHash = "", "h2:other"
		}, e1, true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p := poolPass()
			tc.change(p)
			p.inputs.exports = tc.rendered
			if got := p.exportsGuarded(); got != tc.want {
				t.Errorf("exportsGuarded = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHoldBack(t *testing.T) {
	pending := infrav1.TerraformPlan{ObjectMeta: metav1.ObjectMeta{Name: "pool-abc", Labels: map[string]string{infrav1.PlanPhaseLabel: "Pending"}},
		Spec: infrav1.TerraformPlanSpec{Reason: infrav1.PlanReasonExportsChange, InputsHash: "a2:change"}}
	change := rendered{approval: "a2:change", exports: e2}
	testCases := []struct {
		name   string
		change func(*pass)
		r      rendered
		held   bool
	}{
		{"a pending exports change is held back", func(*pass) {}, change, true},
		{"the applied exports hold nothing", func(*pass) {}, rendered{approval: "a2:change", exports: e1}, false},
		{"an approved plan lets the change through", func(p *pass) { p.plans[0].Spec.Approved = ptr.To(true) }, change, false},
		{"a plan of other inputs holds nothing", func(*pass) {}, rendered{approval: "a2:other", exports: e2}, false},
		{"no plan yet: the guarded apply runs", func(p *pass) { p.plans = nil }, change, false},
		{"partly applied: nothing is held", func(p *pass) { p.inputs.attempt.PartialExports = `{"job":"j"}` }, change, false},
		{"the applied record lost: nothing to render", func(p *pass) { p.inputs.applied = nil }, change, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p := poolPass()
			p.plans = []infrav1.TerraformPlan{*pending.DeepCopy()}
			tc.change(p)
			h := p.holdBack(tc.r)
			if (h != nil) != tc.held {
				t.Fatalf("holdBack = %+v, want held %v", h, tc.held)
			}
			if h != nil && (h.plan != "pool-abc" || h.approval != "a2:change" || !json.Valid(h.applied) || inputs.ExportsHash([]byte(`{"captf_cluster_outputs":`+string(h.applied)+`}`)) != e1) {
				t.Errorf("held %+v: want the plan, the change's approval hash and the applied exports", h)
			}
		})
	}
}
