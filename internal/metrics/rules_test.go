package metrics_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/prometheus/client_golang/prometheus"

	"captf.io/captf/internal/metrics"
)

type promRule struct {
	Alert  string            `json:"alert"`
	Expr   string            `json:"expr"`
	For    string            `json:"for"`
	Labels map[string]string `json:"labels"`
}

func loadRules(t *testing.T) []promRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Groups []struct {
				Name  string     `json:"name"`
				Rules []promRule `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != "PrometheusRule" || doc.Metadata.Name != "captf-alerts" || len(doc.Spec.Groups) != 1 || doc.Spec.Groups[0].Name != "captf" {
		t.Fatalf("want PrometheusRule captf-alerts with one group captf, got %s %s", doc.Kind, doc.Metadata.Name)
	}
	return doc.Spec.Groups[0].Rules
}

// Overlays patch rules by index, so the order is part of the interface.
func TestAlertsInTheDocumentedOrder(t *testing.T) {
	want := []string{"CAPTFJobFailing", "CAPTFDestroyStuck", "CAPTFClusterDrift", "CAPTFStateUnreadable", "CAPTFForceUnlocks",
		"CAPTFReconcileErrors", "CAPTFJobSlow", "CAPTFJobQueueSlow", "CAPTFStateNearSecretLimit", "CAPTFInputsNearLimit", "CAPTFNoRecentSuccess"}
	var got []string
	for _, r := range loadRules(t) {
		got = append(got, r.Alert)
		if r.Labels["severity"] == "" || r.Expr == "" {
			t.Errorf("%s has no severity or no expression", r.Alert)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("alerts %v, want %v", got, want)
	}
}

// The state alerts fire on the series this package exports.
func TestStateAlertsUseExportedMetrics(t *testing.T) {
	rules := map[string]promRule{}
	for _, r := range loadRules(t) {
		rules[r.Alert] = r
	}
	near := rules["CAPTFStateNearSecretLimit"]
	if near.Expr != "captf_state_bytes > 900 * 1024" || near.For != "15m" || near.Labels["severity"] != "warning" {
		t.Errorf("CAPTFStateNearSecretLimit = %+v, want captf_state_bytes > 900 KiB for 15m, warning", near)
	}
	for alert, c := range map[string]prometheus.Collector{
		"CAPTFStateNearSecretLimit": metrics.StateBytes,
		"CAPTFStateUnreadable":      metrics.StateReadErrors,
	} {
		descs := make(chan *prometheus.Desc, 1)
		c.Describe(descs)
		name := descName((<-descs).String())
		if !strings.Contains(rules[alert].Expr, name) {
			t.Errorf("%s does not use %s", alert, name)
		}
	}
}

// descName reads fqName out of a Desc's string form.
func descName(desc string) string {
	_, rest, _ := strings.Cut(desc, `fqName: "`)
	name, _, _ := strings.Cut(rest, `"`)
	return name
}
