package outputs_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"captf.io/captf/internal/outputs"
)

// secret is a value no message may ever show.
const secret = "s3cr3t-Do-Not-Leak-7f9a"

// secretNumber is a number no message may show either, in any rendering
// (the schema library groups digits: 98,765).
const secretNumber = "98765"

// TestNoOutputValueInMessages puts the secret in every place an output can
// carry text, valid or not, and reads the conditions back.
func TestNoOutputValueInMessages(t *testing.T) {
	long := `"` + secret + strings.Repeat("x", 600) + `"`
	cluster := []map[string]string{
		{"exports": `{"password":"` + secret + `"}`},
		{"exports": `{"password":"` + secret + `","ratio":0.5}`},
		{"control_plane_endpoint": `{"host":"` + secret + `"}`},
		{"control_plane_endpoint": `{"host":"` + secret + `","port":` + secretNumber + `}`},
		{"control_plane_endpoint": `{"host":` + long + `,"port":1}`},
		{"failure_domains": `[{"name":"` + secret + `"},{"name":"` + secret + `"}]`},
		{"failure_domains": `[{"name":"a","attributes":{"` + secret + `":1}}]`},
		{"failure_domains": `[{"name":"a","attributes":{"` + secret + `":"` + secret + `"}}]`},
		{"failure_domains": `[{"name":` + long + `}]`},
		{"failure_domains": `"` + secret + `"`},
		{"health": `{"state":"` + secret + `","healthy":true}`},
		{"health": `{"state":"running","healthy":"` + secret + `"}`},
		{"health": `{"state":"running","healthy":true,"` + secret + `":"` + secret + `"}`},
		{"exports": `{"` + secret + `":`},
	}
	machine := []struct {
		changes map[string]string
		expect  outputs.MachineExpect
	}{
		{changes: map[string]string{"provider_id": long}},
		{changes: map[string]string{"provider_id": `"` + secret + `"`}, expect: outputs.MachineExpect{ProviderID: "aws:///zone-a/i-1"}},
		{changes: map[string]string{"failure_domain": `"` + secret + `"`}, expect: outputs.MachineExpect{FailureDomain: "zone-a"}},
		{changes: map[string]string{"addresses": `[{"type":"` + secret + `","address":"` + secret + `"}]`}},
		{changes: map[string]string{"addresses": `[{"type":"Hostname","address":` + long + `}]`}},
		{changes: map[string]string{"interruptible": `"` + secret + `"`}},
	}
	pool := []map[string]string{
		{"provider_id": long},
		{"provider_id_list": `["` + secret + `",` + long + `]`},
		{"replicas": secretNumber + `000000`},
		{"replicas": `-` + secretNumber},
		{"replicas": `"` + secret + `"`},
		{"instances": `[{"provider_id":"p","instance_id":` + long + `}]`},
		{"instances": `[{"provider_id":"p","state":"` + secret + `","failure_domain":` + long + `}]`},
		{"instances": `[{"provider_id":` + long + `}]`},
		{"instances": strings.TrimSuffix(members(1001), "]") + `,{"provider_id":"` + secret + `"}]`},
	}
	var conditions []metav1.Condition
	var printed []string
	for _, changes := range cluster {
		c, r := outputs.ReadCluster(outs(clusterBase, changes))
		conditions = append(conditions, r.Condition(), outputs.HealthCondition(c.Health))
		printed = append(printed, fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%s", c), fmt.Sprintf("%+v", r))
		var b strings.Builder
		slog.New(slog.NewJSONHandler(&b, nil)).Info("Read outputs", "cluster", c)
		printed = append(printed, b.String())
	}
	for _, tc := range machine {
		m, r := outputs.ReadMachine(outs(machineBase, tc.changes), tc.expect)
		conditions = append(conditions, r.Condition(), outputs.HealthCondition(m.Health))
		printed = append(printed, fmt.Sprintf("%+v", r))
	}
	for _, changes := range pool {
		p, r := outputs.ReadPool(outs(poolBase, changes))
		conditions = append(conditions, r.Condition(), outputs.HealthCondition(p.Health))
		printed = append(printed, fmt.Sprintf("%+v", r))
	}
	for i, c := range conditions {
		if strings.Contains(c.Message, secret) || strings.Contains(c.Message, secretNumber) || strings.Contains(c.Message, "98,765") {
			t.Errorf("condition %d (%s/%s) shows an output value: %q", i, c.Type, c.Reason, c.Message)
		}
	}
	for i, p := range printed {
		if strings.Contains(p, secret) {
			t.Errorf("printed value %d shows an output value: %q", i, p)
		}
	}
}
