package manager_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/test/envtest"
)

// alertsTest is what TestAlertRulesFireOnExportedSeries reads of
// config/prometheus/tests/rules_test.yaml.
type alertsTest struct {
	Tests []struct {
		Name        string `json:"name"`
		InputSeries []struct {
			Series string `json:"series"`
		} `json:"input_series"`
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// The captf-alerts rules pass `promtool check rules`; their unit tests
// (config/prometheus/tests/rules_test.yaml) pass `promtool test rules`
// and see every alert fire; and every series those tests feed is one the
// running manager exports: its name, its label names, the values the
// manager fixes (kind, op, a controller it runs) and a histogram's le
// among its buckets.
func TestAlertRulesFireOnExportedSeries(t *testing.T) {
	tools := envtest.RequireTools(t, "promtool")
	startManager(t)
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &rule); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	spec, err := yaml.Marshal(raw["spec"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "tests", "rules_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"captf-alerts.rules.yaml": spec, "rules_test.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "captf-alerts.rules.yaml"}, {"test", "rules", "rules_test.yaml"}} {
		cmd := exec.Command(filepath.Join(tools, "bin", "promtool"), args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	var at alertsTest
	if err := yaml.Unmarshal(tests, &at); err != nil {
		t.Fatal(err)
	}
	fired := map[string]bool{}
	for _, tc := range at.Tests {
		for _, a := range tc.AlertRuleTest {
			fired[a.Alertname] = fired[a.Alertname] || len(a.ExpAlerts) > 0
		}
	}
	// controller-runtime exports a controller's series once the controller
	// starts, after the leader election and its caches' sync, which
	// readiness does not wait for: look until they are all there.
	var missing []string
	deadline := time.Now().Add(time.Minute)
	for {
		missing = missing[:0]
		exported := exportedSeries(t)
		for _, tc := range at.Tests {
			for _, in := range tc.InputSeries {
				if err := exported.check(in.Series); err != nil {
					missing = append(missing, fmt.Sprintf("%s: %s: %v", tc.Name, in.Series, err))
				}
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, m := range missing {
		t.Error(m)
	}
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if !fired[r.Alert] {
				t.Errorf("no unit test of config/prometheus/tests/rules_test.yaml fires %s", r.Alert)
			}
		}
	}
}

// series is what the manager exports of one metric: its label names, the
// values it fixes for some of them, and a histogram's bucket bounds.
type series struct {
	labels  []string
	values  map[string][]string
	buckets []float64
}

type exportedSet map[string]series

var seriesSyntax = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}$`)
var labelSyntax = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"`)

// check says why the series is not one the manager exports.
func (e exportedSet) check(s string) error {
	m := seriesSyntax.FindStringSubmatch(s)
	if m == nil {
		return fmt.Errorf("not a series of the form name{label=\"value\",...}")
	}
	name, bucket := m[1], false
	if base, ok := strings.CutSuffix(name, "_bucket"); ok && len(e[base].buckets) > 0 {
		name, bucket = base, true
	}
	want, ok := e[name]
	if !ok {
		return fmt.Errorf("the manager exports no metric %s", m[1])
	}
	var names []string
	for _, l := range labelSyntax.FindAllStringSubmatch(m[2], -1) {
		names = append(names, l[1])
		if l[1] == "le" && bucket {
			if l[2] != "+Inf" && !slices.ContainsFunc(want.buckets, func(b float64) bool { return strconv.FormatFloat(b, 'g', -1, 64) == l[2] }) {
				return fmt.Errorf("le=%q is none of the buckets %v", l[2], want.buckets)
			}
			continue
		}
		if l[1] == "controller" && !strings.HasPrefix(l[2], "terraform") {
			continue // another manager's controller (Cluster API's), which the alert must leave alone
		}
		if vals, fixed := want.values[l[1]]; fixed && !slices.Contains(vals, l[2]) {
			return fmt.Errorf("%s=%q is none of the values the manager gives it (%v)", l[1], l[2], vals)
		}
	}
	wantNames := slices.Clone(want.labels)
	if bucket {
		wantNames = append(wantNames, "le")
	}
	slices.Sort(names)
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		return fmt.Errorf("labels %v; the manager exports %v", names, wantNames)
	}
	return nil
}

// exportedSeries reads what the running manager's registry serves: the
// controller-runtime families with their series (a controller's reconcile
// errors start at 0 for each controller), and CAPTF's metrics the alerts
// use, described whether or not they have a series yet.
func exportedSeries(t *testing.T) exportedSet {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := exportedSet{}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "controller_runtime_") || len(f.GetMetric()) == 0 {
			continue
		}
		s := series{values: map[string][]string{}}
		for _, l := range f.GetMetric()[0].GetLabel() {
			s.labels = append(s.labels, l.GetName())
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				s.values[l.GetName()] = append(s.values[l.GetName()], l.GetValue())
			}
		}
		out[f.GetName()] = s
	}
	fixed := map[string][]string{"kind": metrics.Kinds, "op": metrics.Ops}
	for _, c := range []prometheus.Collector{metrics.JobsTotal, metrics.JobDuration, metrics.JobQueue, metrics.StateReadErrors,
		metrics.ForceUnlocks, metrics.DriftDetected, metrics.StateBytes, metrics.InputsBytes, metrics.LastSuccess} {
		name, labels := describe(t, c)
		s := series{labels: labels, values: map[string][]string{}}
		for _, l := range labels {
			if v, ok := fixed[l]; ok {
				s.values[l] = v
			}
		}
		if h, ok := c.(*prometheus.HistogramVec); ok {
			s.buckets = bucketsOf(t, h, len(labels))
		}
		out[name] = s
	}
	return out
}

// describe reads a collector's metric name and label names from its
// descriptor.
func describe(t *testing.T, c prometheus.Collector) (string, []string) {
	t.Helper()
	ch := make(chan *prometheus.Desc, 1)
	c.Describe(ch)
	d := (<-ch).String()
	name := regexp.MustCompile(`fqName: "([^"]+)"`).FindStringSubmatch(d)
	labels := regexp.MustCompile(`variableLabels: \{([^}]*)\}`).FindStringSubmatch(d)
	if name == nil || labels == nil {
		t.Fatalf("cannot read the descriptor %s", d)
	}
	return name[1], strings.Split(labels[1], ",")
}

// bucketsOf reads a histogram's bucket bounds from a series made for it
// and deleted again.
func bucketsOf(t *testing.T, h *prometheus.HistogramVec, labels int) []float64 {
	t.Helper()
	values := slices.Repeat([]string{"alerts-test"}, labels)
	obs := h.WithLabelValues(values...)
	defer h.DeleteLabelValues(values...)
	var m dto.Metric
	if err := obs.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, b := range m.GetHistogram().GetBucket() {
		out = append(out, b.GetUpperBound())
	}
	return out
}
