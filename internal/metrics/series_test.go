package metrics

import (
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestSeriesComeBackAfterARestart: the per-object gauges a manager
// publishes for an object are what Series returns, under their metric
// names, and Restore publishes them again as they were: a manager
// restarted over a settled object shows the same series before its next
// full pass. Every per-object gauge is covered, by its exposed name.
func TestSeriesComeBackAfterARestart(t *testing.T) {
	m := Object{Kind: "TerraformMachine", Namespace: "series", Name: "m"}
	c := Object{Kind: "TerraformCluster", Namespace: "series", Name: "c"}
	i := 1.0
	for _, g := range perObject {
		g.WithLabelValues(m.Kind, m.Namespace, m.Name).Set(i)
		i++
	}
	Ready.WithLabelValues(c.Kind, c.Namespace, c.Name).Set(-1)
	SetUnhealthySamples(m.Namespace, m.Name, 3)
	before := Series()
	if got := before[c]; len(got) != 1 || got["captf_ready"] != -1 {
		t.Errorf("the cluster's series: %v, want captf_ready -1 alone", got)
	}
	want := slices.Sorted(maps.Keys(seriesByName()))
	if got := slices.Sorted(maps.Keys(before[m])); !slices.Equal(got, want) {
		t.Fatalf("the machine's series: %v, want every per-object gauge: %v", got, want)
	}
	for name := range before[m] {
		g := seriesByName()[name]
		if n := testutil.CollectAndCount(g, name); n == 0 {
			t.Errorf("%s is not the exposed name of its gauge", name)
		}
	}

	Forget(m.Kind, m.Namespace, m.Name)
	Forget(c.Kind, c.Namespace, c.Name)
	if after := Series(); after[m] != nil || after[c] != nil {
		t.Fatalf("Forget left series: %v %v", after[m], after[c])
	}
	Restore(m, before[m])
	Restore(c, before[c])
	Restore(Object{Kind: "TerraformCluster", Namespace: "series", Name: "x"}, map[string]float64{"captf_unknown": 1, "captf_unhealthy_samples": 2})
	after := Series()
	for _, o := range []Object{m, c} {
		if !maps.Equal(after[o], before[o]) {
			t.Errorf("%s restored: %v, want %v", o.Name, after[o], before[o])
		}
	}
	if x := after[Object{Kind: "TerraformCluster", Namespace: "series", Name: "x"}]; len(x) != 0 {
		t.Errorf("restored an unknown metric or a cluster's unhealthy samples: %v", x)
	}
	Forget(m.Kind, m.Namespace, m.Name)
	Forget(c.Kind, c.Namespace, c.Name)
}
