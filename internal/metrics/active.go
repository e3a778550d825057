package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Kinds and Ops are the bounded values of the kind and op labels.
var (
	Kinds = []string{"TerraformCluster", "TerraformMachine", "TerraformMachinePool"}
	Ops   = []string{"apply", "destroy", "refresh", "drift", "plan", "restore"}
)

// JobKey is a kind and an operation, the labels of captf_jobs_active.
type JobKey struct {
	Kind, Op string
}

// ActiveJobsSource counts the running (unfinished) Jobs by kind and
// operation at scrape time. It returns ok false when this replica does not
// know (it is not the leader, or its Job cache failed): nothing is
// exported then.
type ActiveJobsSource func() (counts map[JobKey]int, ok bool)

// jobsActive is the captf_jobs_active collector: it asks its source on
// every scrape, so the gauge is never stale.
type jobsActive struct {
	mu     sync.RWMutex
	source ActiveJobsSource
}

var jobsActiveDesc = prometheus.NewDesc("captf_jobs_active",
	"[ALPHA] Jobs running by kind and operation, counted from the Job cache at scrape time.", []string{"kind", "op"}, nil)

// JobsActive is the captf_jobs_active collector. It exports nothing until
// SetActiveJobsSource gives it a source.
var JobsActive = &jobsActive{}

func init() {
	ctrlmetrics.Registry.MustRegister(JobsActive)
}

// SetActiveJobsSource sets what captf_jobs_active reads at scrape time;
// internal/setup sets it to a count over the manager's Job cache.
func SetActiveJobsSource(source ActiveJobsSource) {
	JobsActive.mu.Lock()
	defer JobsActive.mu.Unlock()
	JobsActive.source = source
}

func (c *jobsActive) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsActiveDesc
}

// Collect exports every kind and operation, 0 when none runs, plus any
// other pair the source counted.
func (c *jobsActive) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	source := c.source
	c.mu.RUnlock()
	if source == nil {
		return
	}
	counts, ok := source()
	if !ok {
		return
	}
	all := map[JobKey]int{}
	for _, k := range Kinds {
		for _, op := range Ops {
			all[JobKey{Kind: k, Op: op}] = 0
		}
	}
	for k, n := range counts {
		all[k] += n
	}
	for k, n := range all {
		ch <- prometheus.MustNewConstMetric(jobsActiveDesc, prometheus.GaugeValue, float64(n), k.Kind, k.Op)
	}
}
